-- wrk script for bench/traccar.py: Traccar's forwarded positions (forward.type=json), one a request.
--
-- The same arguments, numbering and output as bench/fixes.lua (bench/wrk.py parses both); each line of the
-- tokens file is "<gateway token> <tracker unique id>", and request g carries the position of tracker g % n
-- at base_ms + k * step_ms (k = g // n) in Traccar 6's body: knots, "+00:00" dates, device.uniqueId.

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

local function position_json(unique_id, k, ms)
  -- The same track as fixes.lua's, as Traccar forwards it (tests/payloads/traccar/v6_json_gt06.json).
  local t = iso(ms)
  return string.format(
    '{"position":{"id":0,"attributes":{"sat":9,"ignition":true,"hdop":0.9,"distance":12.5,'
      .. '"totalDistance":%d,"motion":true},"deviceId":%d,"protocol":"gt06","serverTime":"%s",'
      .. '"deviceTime":"%s","fixTime":"%s","valid":true,"latitude":%.6f,"longitude":%.6f,"altitude":152.0,'
      .. '"speed":%.6f,"course":%d.0,"address":null,"accuracy":0.0,"network":null,"geofenceIds":null},'
      .. '"device":{"id":%d,"attributes":{},"groupId":0,"calendarId":0,"name":"bench","uniqueId":"%s",'
      .. '"status":"online","lastUpdate":"%s","positionId":0,"phone":null,"model":null,"contact":null,'
      .. '"category":"bus","disabled":false,"expirationTime":null}}',
    1000 + k * 12, k % 1000, t, t, t, -10.43 + (k % 1000) * 1e-5, -62.47 + (k % 7) * 1e-5,
    (30 + k % 50) / 1.852, (k * 7) % 360, k % 1000, unique_id, t
  )
end

function request()
  local g = seq * threads + tid
  seq = seq + 1
  generated = generated + 1
  local n = #tokens
  local tracker = g % n
  local k = math.floor(g / n)
  local token, unique_id = string.match(tokens[tracker + 1], "^(%S+) (%S+)$")
  local body = position_json(unique_id, k, base_ms + k * step_ms)
  local headers = {
    ["Authorization"] = "Bearer " .. token,
    ["Content-Type"] = "application/json",
    ["X-Request-Id"] = "bench-" .. g,
  }
  return wrk.format("POST", "/api/v1/traccar/positions", headers, body)
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
    local a = tonumber(string.match(body, '"stored":(%d+)')) or 0
    local d = count(body, '"duplicate":true')
    local r = 0
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
