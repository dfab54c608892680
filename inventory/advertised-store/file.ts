/** The advertised-list store in a file (the paper setup's data folder): one process. */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { type AdvertisedStore, type PublishedLists, parseLists } from "./interface.ts";

export class FileAdvertisedStore implements AdvertisedStore {
  constructor(private readonly path: string) {}
  async load(): Promise<PublishedLists | undefined> {
    try {
      return parseLists(readFileSync(this.path, "utf8"));
    } catch {
      return undefined;
    }
  }
  async save(lists: PublishedLists): Promise<void> {
    mkdirSync(dirname(this.path), { recursive: true });
    writeFileSync(this.path, JSON.stringify(lists));
  }
}
