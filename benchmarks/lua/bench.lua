-- One wrk script for every run of `make bench`, configured through the environment:
--
--   BENCH_MODE     create | replay | noop | list
--   BENCH_PATH     request path (with its query string for list)
--   BENCH_KEYS     file with one secret key per line; each request picks one at random
--   BENCH_RUN      tag that makes idempotency keys unique across runs
--   BENCH_REPLAY   replay: size of the pool of idempotency keys cycled through
--   BENCH_RATE     requests per second for the whole run (open loop, fixed rate); 0 = closed loop
--   BENCH_THREADS  wrk's -t, to split BENCH_RATE between threads
--   BENCH_OUT      where done() writes the run's JSON summary
--   BENCH_TRACE_RUN non-empty: every request carries X-Bench-Trace (this value) and
--                  X-Request-Start (t=<µs since the epoch> when it is sent), which the bench's
--                  trace middleware turns into per-phase timings (benchmarks/trace.py)
--
-- Fresh creates get a fresh idempotency key per request: <run>-<thread>-<counter>.
-- Fixed rate: each thread hands out send slots at rate/threads per second; a connection that
-- becomes free after its slot sends at once and the slot counts as late (reported), so the
-- latency percentiles are open-loop only while "late" stays 0.

local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
  int clock_gettime(int clk_id, bench_timespec *tp);
]]
local CLOCK_REALTIME = 0
local CLOCK_MONOTONIC = 1
local ts = ffi.new("bench_timespec")

local function now_ms()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

local mode = os.getenv("BENCH_MODE") or "create"
local path = os.getenv("BENCH_PATH") or "/"
local keys_file = os.getenv("BENCH_KEYS")
local run_tag = os.getenv("BENCH_RUN") or "run"
local replay_pool = tonumber(os.getenv("BENCH_REPLAY") or "0")
local total_rate = tonumber(os.getenv("BENCH_RATE") or "0")
local thread_count = tonumber(os.getenv("BENCH_THREADS") or "1")
local out_file = os.getenv("BENCH_OUT")
local trace_tag = os.getenv("BENCH_TRACE_RUN") or ""

local function epoch_us()
  ffi.C.clock_gettime(CLOCK_REALTIME, ts)
  return string.format("t=%d%06d", tonumber(ts.tv_sec), math.floor(tonumber(ts.tv_nsec) / 1000))
end

local threads = {}
local next_thread_id = 0

function setup(thread)
  next_thread_id = next_thread_id + 1
  thread:set("thread_id", next_thread_id)
  table.insert(threads, thread)
end

function init(args)
  keys = {}
  for line in io.lines(keys_file) do
    if #line > 0 then
      keys[#keys + 1] = line
    end
  end
  math.randomseed(thread_id * 7919 + os.time())
  counter = 0
  statuses = {}
  duplicates = 0
  late = 0
  max_late_ms = 0
  interval_ms = 0
  if total_rate > 0 then
    interval_ms = 1000 * thread_count / total_rate
  end
  next_slot = nil
end

local function body_for(idempotency_key)
  return '{"account_number":"0123456789","bank_code":"058","amount":"100.00",'
    .. '"narration":"bench","idempotency_key":"' .. idempotency_key .. '"}'
end

function request()
  counter = counter + 1
  local headers = { ["Content-Type"] = "application/json" }
  if trace_tag ~= "" then
    -- request() runs just before the request is written, so this is its send time.
    headers["X-Bench-Trace"] = trace_tag
    headers["X-Request-Start"] = epoch_us()
  end
  if mode == "list" then
    headers["Authorization"] = "Bearer " .. keys[math.random(#keys)]
    return wrk.format("GET", path, headers, nil)
  end
  local key_index = math.random(#keys)
  local idempotency_key
  if mode == "replay" then
    -- The pool's key i always goes with wallet i, so a replay repeats the same request.
    key_index = ((counter * 7 + thread_id) % replay_pool) % #keys + 1
    idempotency_key = run_tag .. "-" .. key_index
  else
    idempotency_key = run_tag .. "-" .. thread_id .. "-" .. counter
  end
  headers["Authorization"] = "Bearer " .. keys[key_index]
  return wrk.format("POST", path, headers, body_for(idempotency_key))
end

function delay()
  if interval_ms == 0 then
    return 0
  end
  local now = now_ms()
  if next_slot == nil then
    -- Threads start their schedules staggered across one interval.
    next_slot = now + interval_ms * (thread_id - 1) / thread_count
  end
  local slot = next_slot
  next_slot = next_slot + interval_ms
  local wait = slot - now
  if wait < 0 then
    late = late + 1
    if -wait > max_late_ms then
      max_late_ms = -wait
    end
    return 0
  end
  return math.floor(wait)
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if mode == "replay" and body and string.find(body, '"duplicate":true', 1, true) then
    duplicates = duplicates + 1
  end
end

local function json_number(value)
  if value ~= value or value == math.huge or value == -math.huge then
    return "null"
  end
  return string.format("%.6f", value)
end

function done(summary, latency, requests)
  local merged = {}
  local total_duplicates, total_late, worst_late = 0, 0, 0
  for _, thread in ipairs(threads) do
    local thread_statuses = thread:get("statuses") or {}
    for status, count in pairs(thread_statuses) do
      merged[status] = (merged[status] or 0) + count
    end
    total_duplicates = total_duplicates + (thread:get("duplicates") or 0)
    total_late = total_late + (thread:get("late") or 0)
    worst_late = math.max(worst_late, thread:get("max_late_ms") or 0)
  end
  local parts = {}
  for status, count in pairs(merged) do
    parts[#parts + 1] = string.format('"%d":%d', status, count)
  end
  local errors = summary.errors
  local seconds = summary.duration / 1e6
  local lines = {
    '"mode":"' .. mode .. '"',
    '"requests":' .. summary.requests,
    '"duration_s":' .. json_number(seconds),
    '"rps":' .. json_number(summary.requests / seconds),
    '"p50_ms":' .. json_number(latency:percentile(50) / 1000),
    '"p90_ms":' .. json_number(latency:percentile(90) / 1000),
    '"p99_ms":' .. json_number(latency:percentile(99) / 1000),
    '"p999_ms":' .. json_number(latency:percentile(99.9) / 1000),
    '"max_ms":' .. json_number(latency.max / 1000),
    '"mean_ms":' .. json_number(latency.mean / 1000),
    '"statuses":{' .. table.concat(parts, ",") .. "}",
    '"duplicates":' .. total_duplicates,
    '"late_sends":' .. total_late,
    '"max_late_ms":' .. json_number(worst_late),
    '"target_rate":' .. json_number(total_rate),
    string.format(
      '"socket_errors":{"connect":%d,"read":%d,"write":%d,"timeout":%d,"status":%d}',
      errors.connect, errors.read, errors.write, errors.timeout, errors.status
    ),
  }
  local text = "{" .. table.concat(lines, ",") .. "}\n"
  if out_file then
    local handle = assert(io.open(out_file, "w"))
    handle:write(text)
    handle:close()
  else
    io.write(text)
  end
end
