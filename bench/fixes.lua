-- wrk script for bench/ingest.py: every request carries fixes no other request carries.
--
-- Arguments (after `--`): tokens_file fixes_per_request base_ms step_ms threads
--   fixes_per_request 1 posts one fix object, more posts {"fixes": [...]} to /api/v1/fixes;
--   request g of the run goes to tracker g % #tokens; that tracker's k-th request holds
--   the fixes at base_ms + (k * fixes_per_request + j) * step_ms, so no (vehicle, ts) repeats.
--
-- Request g carries `X-Request-Id: bench-<g>`; the service echoes the id, so each answer names its
-- request, and through g its fixes (bench/keys.py). done() prints the outcome of every request
-- number as runs ("BENCH run g0 count status", status 0 = built but never answered), 2xx answers
-- whose body did not report all fixes stored, and answers that named no request, next to wrk's
-- own summary; bench/wrk.py parses them.

local tokens = {}
local per_request = 1
local base_ms = 0
local step_ms = 1
local threads = 1
local seq = 0
-- Per-thread results, read by done() through thread:get().
generated = 0
statuses = {}
accepted = 0
duplicates = 0
rejected = 0
tid = 0
answers = {} -- g -> HTTP status
miscounted = {} -- "g accepted duplicates rejected" of 2xx answers that did not store all their fixes
unidentified = 0 -- answers without a request id we sent

local registry = {}
local next_tid = 0

function setup(thread)
  -- Runs in the main Lua state: number the threads so their request sequences interleave.
  thread:set("tid", next_tid)
  next_tid = next_tid + 1
  table.insert(registry, thread)
end

function init(args)
  for line in io.lines(args[1]) do
    if #line > 0 then
      table.insert(tokens, line)
    end
  end
  per_request = tonumber(args[2])
  base_ms = tonumber(args[3])
  step_ms = tonumber(args[4])
  threads = tonumber(args[5])
end

local function iso(ms)
  local s = math.floor(ms / 1000)
  return os.date("!%Y-%m-%dT%H:%M:%S", s) .. string.format(".%03dZ", ms - s * 1000)
end

local function fix_json(k, ms)
  -- A tracker driving north of Jaru (-10.43, -62.47); fields as a typical device sends them.
  return string.format(
    '{"ts":"%s","lat":%.6f,"lon":%.6f,"speed_kmh":%.1f,"heading_deg":%d,'
      .. '"altitude_m":152.0,"hdop":0.9,"satellites":9,"ignition":true}',
    iso(ms), -10.43 + (k % 1000) * 1e-5, -62.47 + (k % 7) * 1e-5, 30 + k % 50, (k * 7) % 360
  )
end

function request()
  local g = seq * threads + tid
  seq = seq + 1
  generated = generated + 1
  local n = #tokens
  local tracker = g % n
  local k = math.floor(g / n)
  local body
  if per_request == 1 then
    body = fix_json(k, base_ms + k * step_ms)
  else
    local parts = {}
    for j = 0, per_request - 1 do
      local idx = k * per_request + j
      parts[j + 1] = fix_json(idx, base_ms + idx * step_ms)
    end
    body = '{"fixes":[' .. table.concat(parts, ",") .. "]}"
  end
  local headers = {
    ["Authorization"] = "Bearer " .. tokens[tracker + 1],
    ["Content-Type"] = "application/json",
    ["X-Request-Id"] = "bench-" .. g,
  }
  return wrk.format("POST", "/api/v1/fixes", headers, body)
end

local function count(haystack, needle)
  local c, pos = 0, 1
  while true do
    local s, e = string.find(haystack, needle, pos, true)
    if not s then
      return c
    end
    c, pos = c + 1, e + 1
  end
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  local rid = headers["x-request-id"] or headers["X-Request-Id"]
  local g = rid and tonumber(string.match(rid, "^bench%-(%d+)$"))
  if g then
    answers[g] = status
  else
    unidentified = unidentified + 1
  end
  if status >= 200 and status < 300 then
    -- What the service says it stored, not what we assume a 2xx means.
    local a = tonumber(string.match(body, '"accepted":(%d+)')) or 0
    local d = tonumber(string.match(body, '"duplicates":(%d+)')) or 0
    local r = count(body, '"index":')
    accepted, duplicates, rejected = accepted + a, duplicates + d, rejected + r
    if a ~= per_request and g then
      table.insert(miscounted, string.format("%d %d %d %d", g, a, d, r))
    end
  end
end

-- The outcome of every request number of all threads, as runs: thread t built g = seq * threads + t
-- for seq < its `generated`; a built g with no answer is 0, a number no thread built is -1.
local function write_runs()
  local threads = #registry -- done() runs in the main state, where init() never set `threads`
  local all, built, last = {}, {}, -1
  for _, thread in ipairs(registry) do
    local t, n = thread:get("tid"), thread:get("generated")
    built[t] = n
    last = math.max(last, (n - 1) * threads + t)
    for g, status in pairs(thread:get("answers")) do
      all[g] = status
    end
  end
  local run_g, run_status, run_n = 0, nil, 0
  for g = 0, last do
    local status = all[g]
    if not status then
      status = (math.floor(g / threads) < (built[g % threads] or 0)) and 0 or -1
    end
    if status == run_status then
      run_n = run_n + 1
    else
      if run_n > 0 then
        io.write(string.format("BENCH run %d %d %d\n", run_g, run_n, run_status))
      end
      run_g, run_status, run_n = g, status, 1
    end
  end
  if run_n > 0 then
    io.write(string.format("BENCH run %d %d %d\n", run_g, run_n, run_status))
  end
end

function done(summary, latency, requests)
  local total = { generated = 0, accepted = 0, duplicates = 0, rejected = 0, unidentified = 0 }
  local by_status = {}
  for _, thread in ipairs(registry) do
    for key, _ in pairs(total) do
      total[key] = total[key] + thread:get(key)
    end
    for code, c in pairs(thread:get("statuses")) do
      by_status[code] = (by_status[code] or 0) + c
    end
  end
  local e = summary.errors
  io.write(string.format("BENCH summary %d %d %d\n", summary.requests, summary.duration, summary.bytes))
  io.write(string.format("BENCH errors %d %d %d %d %d\n", e.connect, e.read, e.write, e.status, e.timeout))
  io.write(
    string.format(
      "BENCH latency_us %d %d %d %d %d\n",
      latency:percentile(50),
      latency:percentile(90),
      latency:percentile(99),
      latency.max,
      latency.mean
    )
  )
  io.write(string.format("BENCH generated %d\n", total.generated))
  io.write(string.format("BENCH body %d %d %d\n", total.accepted, total.duplicates, total.rejected))
  for code, c in pairs(by_status) do
    io.write(string.format("BENCH status %d %d\n", code, c))
  end
  io.write(string.format("BENCH unidentified %d\n", total.unidentified))
  for _, thread in ipairs(registry) do
    for _, line in ipairs(thread:get("miscounted")) do
      io.write("BENCH miscounted " .. line .. "\n")
    end
  end
  write_runs()
end
