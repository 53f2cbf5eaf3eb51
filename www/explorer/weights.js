// The trained weights: the manifest and one file per mechanism, fetched once per store and
// shared by every explorer that uses the store (a failed fetch is tried again next time).
// Files are read with arrayBuffer(), not a body stream: reading a stream to count bytes made
// Chromium report the request as aborted now and then.

export class WeightsStore {
  #base;
  #manifest = null;
  #manifestPromise = null;
  #buffers = new Map();

  /** `base` is the URL of the folder holding `manifest.json` and the `*.bin` files. */
  constructor(base) {
    this.#base = new URL(base);
  }

  /** The folder's URL. */
  get base() {
    return this.#base;
  }

  /** The manifest once fetched, else null. */
  get manifest() {
    return this.#manifest;
  }

  /** Fetches the manifest (once). */
  fetchManifest() {
    if (!this.#manifestPromise) {
      const promise = fetch(new URL('manifest.json', this.#base))
        .then((res) => {
          if (!res.ok) throw new Error(`manifest.json: HTTP ${res.status}`);
          return res.json();
        })
        .then((manifest) => {
          this.#manifest = manifest;
          return manifest;
        });
      promise.catch(() => {
        if (this.#manifestPromise === promise) this.#manifestPromise = null;
      });
      this.#manifestPromise = promise;
    }
    return this.#manifestPromise;
  }

  /** The manifest's entry for `mechanism`, once the manifest is in, else null. */
  entry(mechanism) {
    return this.#manifest?.models?.find((m) => m.mechanism === mechanism) ?? null;
  }

  /** The bytes of `mechanism`'s weights (fetched once); rejects with a readable error. */
  fetch(mechanism) {
    let promise = this.#buffers.get(mechanism);
    if (!promise) {
      promise = (async () => {
        await this.fetchManifest();
        const entry = this.entry(mechanism);
        if (!entry) throw new Error(`no trained file for ${mechanism}`);
        const res = await fetch(new URL(entry.file, this.#base));
        if (!res.ok) throw new Error(`${entry.file}: HTTP ${res.status}`);
        return res.arrayBuffer();
      })();
      promise.catch(() => {
        if (this.#buffers.get(mechanism) === promise) this.#buffers.delete(mechanism);
      });
      this.#buffers.set(mechanism, promise);
    }
    return promise;
  }
}
