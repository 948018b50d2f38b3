-- wrk script for bench/ingest.py: every request carries fixes no other request carries.
--
-- Arguments (after `--`): tokens_file fixes_per_request base_ms step_ms threads
--   fixes_per_request 1 posts one fix object, more posts {"fixes": [...]} to /api/v1/fixes;
--   request g of the run goes to tracker g % #tokens; that tracker's k-th request holds
--   the fixes at base_ms + (k * fixes_per_request + j) * step_ms, so no (vehicle, ts) repeats.
--
-- Prints `BENCH ...` lines in done() that bench/wrk.py parses next to wrk's own summary.

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
  if status >= 200 and status < 300 then
    -- What the service says it stored, not what we assume a 2xx means.
    accepted = accepted + (tonumber(string.match(body, '"accepted":(%d+)')) or 0)
    duplicates = duplicates + (tonumber(string.match(body, '"duplicates":(%d+)')) or 0)
    rejected = rejected + count(body, '"index":')
  end
end

function done(summary, latency, requests)
  local total = { generated = 0, accepted = 0, duplicates = 0, rejected = 0 }
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
end
