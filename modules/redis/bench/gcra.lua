-- The peer WEIR.BUCKET is measured against: GCRA as a Lua script run with
-- EVALSHA, the way Redis users write it. Written from the published
-- algorithm (the ATM Forum's virtual scheduling form of the generic cell
-- rate algorithm): the state is the theoretical arrival time (TAT) in Unix
-- microseconds; a cost of n moves it n emission intervals forward, and is
-- allowed while the TAT stays within the tolerance (burst x interval) of
-- now. Same reply as WEIR.BUCKET / CL.THROTTLE.
--
-- KEYS[1]: the key. ARGV: rate (tokens per second), burst, [cost].
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3] or '1')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = math.ceil(1000000 / rate)
local tolerance = interval * burst
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then
  tat = now
end
local new_tat = tat + cost * interval
if new_tat - now > tolerance then
  return {1, burst, math.floor((tolerance - (tat - now)) / interval),
          math.ceil((new_tat - tolerance - now) / 1000000),
          math.ceil((tat - now) / 1000000)}
end
redis.call('SET', KEYS[1], string.format('%.0f', new_tat),
           'PXAT', string.format('%.0f', math.ceil(new_tat / 1000)))
return {0, burst, math.floor((tolerance - (new_tat - now)) / interval), -1,
        math.ceil((new_tat - now) / 1000000)}
