// The conformance traces (traces/README.md) replayed by the bay's wasm
// build: every call of every trace whose type the build exports goes to
// its bay_<op> export and must answer what the file says, bit for bit.
// Usage: node bay/test/traces.mjs BAY_WASM TRACES_DIR. The types it leaves
// out are the "wasm" lines of traces/skips.txt.
import { readFileSync } from "node:fs";
import { join } from "node:path";

const [wasmPath, dir] = process.argv.slice(2);
if (!wasmPath || !dir) {
  console.error("usage: node traces.mjs BAY_WASM TRACES_DIR");
  process.exit(2);
}
const { instance } = await WebAssembly.instantiate(readFileSync(wasmPath));
const x = instance.exports;

// The ops replayed here, by type; each goes to the export bay_<op>. A type
// not here is a "wasm" line of traces/skips.txt (tests/surface.rs checks).
const OPS = {
  rate: ["rate_limit_new", "rate_limit_set", "rate_set", "rate_allow", "rate_next"],
  gcra: ["gcra_limit_new", "gcra_limit_set", "gcra_set", "gcra_allow", "gcra_allow_n", "gcra_next", "gcra_room"],
  deadline: ["deadline_start", "deadline_set", "deadline_expired", "deadline_remaining"],
  bucket: ["bucket_new", "bucket_take", "bucket_refund", "bucket_next", "bucket_tokens", "bucket_reconfigure"],
  limiter: ["limiter_bucket", "limiter_fixed_window", "limiter_cooldown", "limiter_try_consume", "limiter_consume",
    "limiter_refund", "limiter_available", "limiter_capacity", "limiter_last_refill", "limiter_window_start",
    "limiter_cooldown_end"],
  sliding: ["sliding_new", "sliding_take", "sliding_left", "sliding_next", "sliding_reconfigure"],
  period: ["period_new", "period_take", "period_left", "period_next", "period_reconfigure"],
  gate: ["gate_new", "gate_enter", "gate_leave", "gate_held", "gate_reconfigure"],
  backoff: ["backoff_preset", "backoff_full_jitter", "backoff_set", "backoff_check", "backoff_more", "backoff_delay",
    "backoff_ceiling", "backoff_schedule"],
  window: ["window_new", "window_add", "window_read_total", "window_read_buckets", "window_size", "window_width",
    "window_reconfigure"],
  budget: ["budget_new", "budget_deposit", "budget_withdraw", "budget_left", "budget_tokens", "budget_reconfigure"],
  concurrency: ["concurrency_new", "concurrency_new_partitioned", "concurrency_enter", "concurrency_leave",
    "concurrency_enter_partition", "concurrency_leave_partition", "concurrency_partition_flying",
    "concurrency_partition_room", "concurrency_limit", "concurrency_flying", "concurrency_long_rtt",
    "concurrency_reconfigure"],
  breaker: ["breaker_new", "breaker_allow", "breaker_pass", "breaker_fail", "breaker_ratio", "breaker_read_tally",
    "breaker_reconfigure"],
  shedder: ["shedder_new", "shedder_allow", "shedder_allow_class", "shedder_pass", "shedder_fail", "shedder_flying",
    "shedder_read_stats", "shedder_reconfigure"],
  pool: ["pool_new", "pool_reconfigure", "pool_take", "pool_made", "pool_made_jittered", "pool_unmade", "pool_give", "pool_drop",
    "pool_evict", "pool_close", "pool_mark_old", "pool_make_ahead", "pool_live", "pool_idle", "pool_busy",
    "pool_next_expiry", "pool_read_stats"],
  bloom: ["bloom_new", "bloom_new_gcra", "bloom_reconfigure", "bloom_reconfigure_gcra", "bloom_allow", "bloom_next"],
  charge: ["charge_all"],
  lease: ["lease_new", "lease_take", "lease_reconfigure", "lease_grant", "lease_release", "lease_unspent", "lease_expires", "lease_cap",
    "lease_read_stats"],
  keyed: ["keyed_new", "keyed_new_rate", "keyed_reconfigure", "keyed_reconfigure_rate", "keyed_allow", "keyed_decide",
    "keyed_next", "keyed_read", "keyed_buckets_for", "keyed_overflow_chance"],
};

// A token as the 64-bit pattern the exports take: doubles are written as
// their bits already (0x...), integers in decimal, bools as 0/1.
const bits = (t) => BigInt.asIntN(64, BigInt(t));

const skipped = new Set();
for (const line of readFileSync(join(dir, "skips.txt"), "utf8").split("\n")) {
  const [face, what] = line.split(" ");
  if (face === "wasm") skipped.add(what);
}

let files = 0, calls = 0;
for (const name of readFileSync(join(dir, "index.txt"), "utf8").split("\n")) {
  if (name === "" || name.startsWith("#")) continue;
  const text = readFileSync(join(dir, name), "utf8").split("\n");
  const type = text[0].split(" ")[2];
  if (skipped.has(type) || skipped.has(name.split("/").pop())) continue;
  if (!(type in OPS)) throw new Error(`${name}: type ${type} is neither replayed nor skipped for wasm`);
  const ops = new Set(Object.values(OPS).flat());
  x.bay_trace_reset();
  for (let i = 1; i < text.length; i++) {
    const line = text[i];
    if (line === "" || line.startsWith("#")) continue;
    const eq = line.indexOf(" =");
    const call = line.slice(0, eq), want = line.slice(eq + 2).trim();
    const [op, ...args] = call.split(" ");
    const f = ops.has(op) ? x["bay_" + op] : undefined;
    if (typeof f !== "function") throw new Error(`${name}:${i + 1}: the wasm build exports no bay_${op}`);
    let n;
    if (f.length === 0 && args.length > 0) {
      // An export with no parameters reads its tokens from bay_trace_in's
      // buffer: one 64-bit pattern each, a key (x<hex>) as its length then
      // one pattern per byte.
      const words = args.flatMap((t) =>
        t.startsWith("x") ? [BigInt((t.length - 1) / 2), ...(t.slice(1).match(/../g) ?? []).map((b) => BigInt(parseInt(b, 16)))] : [bits(t)]);
      const at = x.bay_trace_in(words.length);
      new BigInt64Array(x.memory.buffer, at, words.length).set(words.map((w) => BigInt.asIntN(64, w)));
      n = f();
    } else {
      n = f(...args.map(bits));
    }
    const got = Array.from(new BigUint64Array(x.memory.buffer, x.bay_trace_out(), n));
    const expected = want.split(" ").filter((t) => t !== "").map((t) => BigInt.asUintN(64, BigInt(t)));
    if (got.length !== expected.length || got.some((g, k) => g !== expected[k])) {
      // Each answer as the file writes it: doubles as bits, the rest in decimal.
      const tokens = want.split(" ").filter((t) => t !== "");
      const show = got.map((g, k) => ((tokens[k] ?? "").startsWith("0x") ? "0x" + g.toString(16).padStart(16, "0") : BigInt.asIntN(64, g).toString()));
      throw new Error(`${name}:${i + 1}: ${op}: expected "${want}", got "${show.join(" ")}"`);
    }
    calls++;
  }
  files++;
}
console.log(`wasm traces: ${files} files, ${calls} calls replayed`);
