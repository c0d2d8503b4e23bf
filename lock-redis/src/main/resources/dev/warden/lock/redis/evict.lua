-- An operator ends a hold: compare-and-DEL by the holder's token, a mark its next renewal reads, and
-- the waiters woken as by a release.
-- KEYS[1] lock key, KEYS[2] the lock's evicted key
-- ARGV[1] the holder's token, ARGV[2] the mark's lifetime in milliseconds, ARGV[3] release channel,
-- ARGV[4] PUBLISH or SPUBLISH
-- Returns 1 when that hold was ended, 0 when the lock is free or held under another token.
if ARGV[4] ~= 'PUBLISH' and ARGV[4] ~= 'SPUBLISH' then
  return redis.error_reply('ERR warden evict: publish with PUBLISH or SPUBLISH')
end
local value = redis.call('GET', KEYS[1])
if not value then
  return 0
end
local token = string.match(value, ':(%d+)$')
if token ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], token, 'PX', ARGV[2])
redis.call(ARGV[4], ARGV[3], value)
return 1
