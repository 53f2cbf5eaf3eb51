// The page's side of the heads' Web Worker (pkg/heads-worker.js): heads whose maps would take
// longer than a step between frames (at 2,048 tokens about 50 ms a head) are computed in the
// worker, off the main thread, and adopted by the page's handle between frames (`adopt_start`,
// `adopt_map`: one task each, one map, 10–15 ms at 2,048 tokens, copied into wasm memory),
// shift stages included (computed here, into new buffers, they would be one task of 45–65 ms
// a head).
//
// The worker mirrors the page's handle: this keeps what it was made from (`source`: the model's
// bytes or null, the text, a spec's bytes) and sends it with the next job when it changed; each
// job carries the handle's settings, `overrides()` and `head_key()`. A reply is adopted only
// under the key it was computed for (the handle refuses another), so a head computed before a
// person moved a slider is dropped, never drawn with the wrong settings. One job is in the
// worker at a time: the next is sent when a reply arrives, and no queue of stale jobs builds up.
//
// Where no worker can be made (no URL: the single-file build; a browser without module workers;
// a worker that fails to start, or crashes MAX_RESTARTS times), `usable` is false and the head
// steps compute every head on the main thread as before (heads.js). A worker that crashes (a
// Rust panic) is ended and a fresh one started for the next job, as the engine wrapper does
// for the page's handle.

/** How many crashed workers are replaced before the page computes every head itself. */
export const MAX_RESTARTS = 3;

/** A job unanswered for this long (ms) counts as a crash (a worker that hangs or was killed):
 * one head takes the worker well under a second at 2,048 tokens. */
export const JOB_TIMEOUT_MS = 30_000;

export class HeadOffload {
  #view;
  #url = null;
  #module = null;
  #files = false;
  #onChange;
  #worker = null;
  #state = 'idle'; // idle | starting | ready | failed
  #restarts = 0;
  /** What the page's handle was made from; `rev` counts its changes. */
  #source = { rev: 0, model: null, text: '', spec: null };
  #sentRev = -1;
  /** The job in the worker, `{ head, key }`, or null. */
  #job = null;
  /** Keys the worker's mirror does not reproduce: their heads are computed on the page. */
  #refused = new Set();
  /** Heads received, adopted map by map in order: `{ meta, maps, next }` each (at most two:
   * the worker computes the next head while the page adopts the last). */
  #replies = [];
  #timer = null;
  #watchdog = null;
  /** For docs/PERFORMANCE.md and the tests: heads adopted, the last head's time in the worker,
   * the worker's largest wasm memory, the longest adoption task, replies dropped, crashes. */
  stats = { heads: 0, worker_ms: 0, worker_memory: 0, adopt_task_ms: 0, dropped: 0, crashes: 0 };

  /**
   * `worker` is the runtime's `{ url, module, files }` (runtime.js): the worker's bundle, the
   * compiled wasm the page's handle runs and whether it is the full build's; null where there
   * is none. `onChange()` runs when a head was adopted or the worker failed (the head steps
   * look again).
   */
  constructor(view, { worker = null, onChange }) {
    this.#view = view;
    this.#onChange = onChange;
    this.#use(worker);
  }

  #use(worker) {
    this.#url = worker?.url ?? null;
    this.#module = worker?.module ?? null;
    this.#files = !!worker?.files;
    this.#state = this.#url && this.#module && typeof Worker === 'function' ? 'idle' : 'failed';
  }

  /**
   * The page's handle moved to another build (engine.js `useFull`): the worker running the old
   * one is ended, and the next job starts one on `worker` (the new runtime's), with the same
   * source (what the handle was made from moves with it) and a fresh count of restarts.
   */
  moveTo(worker) {
    this.stop();
    this.#restarts = 0;
    this.#refused.clear();
    this.#use(worker);
    this.#onChange();
  }

  /** Whether heads can be sent to a worker (else every head is computed on the page). */
  get usable() {
    return this.#state !== 'failed';
  }

  /** Whether a job or an adoption is under way. */
  get busy() {
    return this.#job !== null || this.#replies.length > 0;
  }

  /** Whether the worker's mirror failed to reproduce `key` (those heads are the page's). */
  refused(key) {
    return this.#refused.has(key);
  }

  /** The page's handle loaded a trained model (its bytes) or the untrained one (null). */
  model(bytes) {
    this.#set({ model: bytes ? new Uint8Array(bytes) : null });
  }

  /** The page's handle got a sentence. */
  text(text) {
    this.#set({ text });
  }

  /** The page's handle drew a spec (its bytes or JSON text), or left it (null). */
  spec(spec) {
    this.#set({ spec: spec ?? null });
  }

  /** The page's handle was replaced by a fresh one (untrained, empty). */
  reset() {
    this.#set({ model: null, text: '', spec: null });
  }

  #set(change) {
    this.#source = { ...this.#source, ...change, rev: this.#source.rev + 1 };
  }

  /**
   * Asks the worker for one of `heads` (heads without maps, in order) under `key`, unless a job
   * or an adoption is under way. Returns whether the worker is on it.
   */
  request(heads, key) {
    if (!this.usable || this.#refused.has(key)) return false;
    if (this.#job !== null || this.#replies.length > 1) return true;
    const head = heads.find((h) => !this.#replies.some((r) => r.meta.head === h && r.meta.key === key));
    if (head === undefined) return this.#replies.length > 0;
    if (this.#state === 'idle') this.#start();
    if (this.#state !== 'ready' && this.#state !== 'starting') return false;
    const ex = (fn) => this.#view.engine.call(fn);
    const settings = ex((h) => h.settings());
    delete settings.gate_learned;
    delete settings.lambda_learned;
    const message = { type: 'job', head, key, settings, overrides: Array.from(ex((h) => h.overrides())) };
    if (this.#sentRev !== this.#source.rev) {
      const { model, text, spec } = this.#source;
      message.source = { model, text, spec };
      this.#sentRev = this.#source.rev;
    }
    this.#job = { head, key };
    this.#worker.postMessage(message);
    clearTimeout(this.#watchdog);
    this.#watchdog = setTimeout(() => this.#job && this.#crashed(), JOB_TIMEOUT_MS);
    return true;
  }

  #start() {
    this.#state = 'starting';
    // A browser without module workers never reads `type` (and would run the bundle as a
    // classic script, which cannot import): then the page computes every head itself.
    let typed = false;
    const options = {
      get type() {
        typed = true;
        return 'module';
      },
      name: 'diffattn-heads',
    };
    try {
      this.#worker = new Worker(this.#url, options);
    } catch {
      this.#fail();
      return;
    }
    if (!typed) {
      this.#fail();
      return;
    }
    this.#worker.addEventListener('message', (event) => this.#receive(event.data));
    // A worker that cannot load (its file missing, a policy refusing it) never started: no
    // restart. One that started and failed later counts as a crash.
    this.#worker.addEventListener('error', (event) => {
      event.preventDefault?.();
      if (this.#state === 'starting') this.#fail();
      else this.#crashed();
    });
    this.#worker.postMessage({ type: 'start', module: this.#module, files: this.#files });
    this.#sentRev = -1;
  }

  #receive(message) {
    if (message.type === 'ready') {
      this.#state = 'ready';
      return;
    }
    if (message.type === 'crashed') {
      this.#crashed();
      return;
    }
    const job = this.#job;
    this.#job = null;
    clearTimeout(this.#watchdog);
    if (message.type === 'head') {
      this.stats.worker_ms = message.ms;
      this.stats.worker_memory = Math.max(this.stats.worker_memory, message.memory ?? 0);
      this.#replies.push({ meta: message.meta, maps: message.maps, next: -1 });
      this.#adoptSoon();
      // The worker is free: the head steps may send the next job while this one is adopted.
      this.#onChange();
      return;
    }
    // A mirror that does not reproduce the page's inputs, or an error: the page's own steps.
    if (job) this.#refused.add(job.key);
    this.#onChange();
  }

  #adoptSoon() {
    if (this.#timer === null) this.#timer = setTimeout(() => this.#adoptStep(), 0);
  }

  /** One map into the page's handle per task (the first task checks the key). */
  #adoptStep() {
    this.#timer = null;
    const a = this.#replies[0];
    if (!a) return;
    if (this.#view.engine.state !== 'ready') {
      this.#replies = [];
      return;
    }
    if (this.#view.heads.waiting()) {
      this.#timer = setTimeout(() => this.#adoptStep(), 16);
      return;
    }
    const started = performance.now();
    let status;
    try {
      if (a.next < 0) {
        const m = a.meta;
        const adopting = this.#view.engine.call((ex) => ex.adopt_start(m.key, m.head, m.mechanism, m.base, m.shift, new Float32Array(m.scalars), new Float32Array(m.stats.flat())));
        status = adopting ? 'partial' : 'stale';
      } else {
        const [rows, cols] = a.meta.shapes[a.next];
        status = this.#view.engine.call((ex) => ex.adopt_map(rows, cols, a.maps[a.next]));
        a.maps[a.next] = null;
      }
    } catch (err) {
      this.#replies = [];
      this.#view.report(err);
      this.#onChange();
      return;
    }
    this.stats.adopt_task_ms = Math.max(this.stats.adopt_task_ms, performance.now() - started);
    a.next += 1;
    if (status === 'partial') {
      this.#adoptSoon();
      return;
    }
    this.#replies.shift();
    if (status === 'adopted') this.stats.heads += 1;
    else this.stats.dropped += 1;
    if (this.#replies.length) this.#adoptSoon();
    this.#onChange();
  }

  #crashed() {
    clearTimeout(this.#watchdog);
    this.stats.crashes += 1;
    this.#worker?.terminate();
    this.#worker = null;
    this.#job = null;
    this.#replies = [];
    this.#restarts += 1;
    this.#state = this.#restarts > MAX_RESTARTS ? 'failed' : 'idle';
    this.#onChange();
  }

  #fail() {
    clearTimeout(this.#watchdog);
    this.#worker?.terminate();
    this.#worker = null;
    this.#job = null;
    this.#state = 'failed';
    this.#onChange();
  }

  /** Tests only: makes the worker's handle panic (see heads-worker.js). */
  trapForTests() {
    this.#worker?.postMessage({ type: 'trap' });
  }

  /** Ends the worker; nothing more is sent. */
  stop() {
    clearTimeout(this.#timer);
    this.#timer = null;
    this.#replies = [];
    this.#fail();
  }
}
