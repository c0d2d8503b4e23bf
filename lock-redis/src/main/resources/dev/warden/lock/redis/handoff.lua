-- Compare-and-release, and unless another client waits, grant to the next owner in the same step.
-- KEYS[1] lock key, KEYS[2] fence, KEYS[3] waiting marker
-- ARGV[1] the grant's value (owner:token), ARGV[2] next owner, ARGV[3] TTL in milliseconds,
-- ARGV[4] release channel, ARGV[5] PUBLISH or SPUBLISH (sharded, on a Cluster), ARGV[6] how many
-- tokens the next grant reserves (as in acquire.lua)
-- Returns {1, token, last token reserved} when handed on; {2, 0, 0} when only released (someone else
-- waits: woken as by a release); {0, 0, 0} when the lock is gone or someone else's (nothing changed).
-- The next token, and the block it reserves, are chosen as acquire.lua chooses them.
local ttl = tonumber(ARGV[3])
if ttl == nil or ttl < 1 or ttl ~= math.floor(ttl) then
  return redis.error_reply('ERR warden handoff: TTL must be a positive whole number of milliseconds')
end
if ARGV[5] ~= 'PUBLISH' and ARGV[5] ~= 'SPUBLISH' then
  return redis.error_reply('ERR warden handoff: publish with PUBLISH or SPUBLISH')
end
local tokens = tonumber(ARGV[6])
if tokens == nil or tokens < 1 or tokens > 1000000 or tokens ~= math.floor(tokens) then
  return redis.error_reply('ERR warden handoff: reserve 1 to 1000000 tokens')
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return {0, 0, 0}
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('DEL', KEYS[1])
  redis.call(ARGV[5], ARGV[4], ARGV[1])
  return {2, 0, 0}
end
local time = redis.call('TIME')
local token = (tonumber(redis.call('GET', KEYS[2])) or 0) + 1
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
if now > token then token = now end
local last = token + tokens - 1
if last > now + 1000 then last = math.max(token, now + 1000) end
local text = string.format('%d', token)
redis.call('SET', KEYS[2], string.format('%d', last))
redis.call('SET', KEYS[1], ARGV[2] .. ':' .. text, 'PX', ARGV[3])
return {1, token, last}
