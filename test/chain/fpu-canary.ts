/**
 * Detects a corrupted x87 FPU state in this thread (see ata-emulation.ts for why it can happen with
 * litesvm 0.8): V8 computes `%` on heap doubles with x87 `fprem`, which yields NaN when a native
 * library left the x87 register stack full. `-0 % 64` must be -0.
 */
const operands = [-0, 64];

function remainder(a: number, b: number): number {
  return a % b;
}

/** True when the FPU state is sound (no NaN from a plain remainder). */
export function fpuStateIsClean(): boolean {
  return Object.is(remainder(operands[0] as number, operands[1] as number), -0);
}
