/**
 * Where the last published token lists are remembered, so that a restart (with a new configuration,
 * say) still notices a mint that only moved between the two lists. Adapters: redis.ts (shared by every
 * instance) and file.ts (a file in the data folder, one process).
 */

export interface PublishedLists {
  tokens: string[];
  permissioned: string[];
}

/** Where the last published lists are remembered. */
export interface AdvertisedStore {
  load(): Promise<PublishedLists | undefined>;
  save(lists: PublishedLists): Promise<void>;
}

/** Reads stored lists back; undefined for anything that is not two arrays of strings. */
export function parseLists(raw: string | null): PublishedLists | undefined {
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as Partial<PublishedLists>;
    if (Array.isArray(v.tokens) && Array.isArray(v.permissioned)) {
      return { tokens: v.tokens.map(String), permissioned: v.permissioned.map(String) };
    }
  } catch {}
  return undefined;
}
