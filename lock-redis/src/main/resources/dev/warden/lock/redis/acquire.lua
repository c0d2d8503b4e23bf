-- Takes the lock if it is free, atomically with the next fencing token.
-- KEYS[1] lock key, KEYS[2] fence (the last token granted; never expires), KEYS[3] waiting marker
-- ARGV[1] owner, ARGV[2] TTL in milliseconds, ARGV[3] waiting marker lifetime in milliseconds
-- Returns {1, token} when granted; {0, PTTL of the holder} when held (-1: the holder set no expiry).
-- A held lock also (re)sets the waiting marker, which stops the holder's client from handing the
-- lock straight on to its own next contender while this one waits.
--
-- The token is the larger of the last token + 1 and the server's clock in microseconds. Each grant
-- takes more than a microsecond of the server's time, so tokens never run ahead of its clock; a
-- replica promoted after a failover, whose fence may lack the last grants, still continues above
-- every token the old primary handed out, as long as its clock is not behind the old primary's by
-- more than the time the failover took. A restart that lost the fence does the same.
local ttl = tonumber(ARGV[2])
if ttl == nil or ttl < 1 or ttl ~= math.floor(ttl) then
  return redis.error_reply('ERR warden acquire: TTL must be a positive whole number of milliseconds')
end
local pttl = redis.call('PTTL', KEYS[1])
if pttl ~= -2 then
  redis.call('SET', KEYS[3], '1', 'PX', ARGV[3])
  return {0, pttl}
end
local time = redis.call('TIME')
local token = (tonumber(redis.call('GET', KEYS[2])) or 0) + 1
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
if now > token then token = now end
local text = string.format('%d', token)
redis.call('SET', KEYS[2], text)
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. text, 'PX', ARGV[2])
return {1, token}
