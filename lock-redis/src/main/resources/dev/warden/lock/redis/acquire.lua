-- Takes the lock if it is free, atomically with the next fencing token.
-- KEYS[1] lock key, KEYS[2] fence (the last token reserved; never expires), KEYS[3] waiting marker
-- ARGV[1] owner, ARGV[2] TTL in milliseconds, ARGV[3] waiting marker lifetime in milliseconds,
-- ARGV[4] how many tokens the grant reserves (1; a lease-caching client's block), ARGV[5] the lock's
-- contender channel, ARGV[6] PUBLISH or SPUBLISH (sharded, on a Cluster)
-- Returns {1, token, last token reserved} when granted; {0, PTTL of the holder, 0} when held (-1: the
-- holder set no expiry).
-- A held lock also (re)sets the waiting marker, which stops the holder's client from handing the
-- lock straight on to its own next contender while this one waits, and is published on the contender
-- channel, where a client that keeps the lock after its release (lease caching) hears it must let go.
-- A grant reserving a block sets the fence to the block's last token: the client lends the others
-- itself, and every later grant of the lock continues above them. A block is cut short so that the
-- fence never runs more than 1000 microseconds past the server's clock, however often blocks are
-- reserved (the failover argument below needs tokens near the clock).
--
-- The token is the larger of the last token + 1 and the server's clock in microseconds. Each grant
-- takes more than a microsecond of the server's time, so tokens never run ahead of its clock by more
-- than a reserved block's 1 ms; a
-- replica promoted after a failover, whose fence may lack the last grants, still continues above
-- every token the old primary handed out, as long as its clock is not behind the old primary's by
-- more than the time the failover took. A restart that lost the fence does the same.
local ttl = tonumber(ARGV[2])
if ttl == nil or ttl < 1 or ttl ~= math.floor(ttl) then
  return redis.error_reply('ERR warden acquire: TTL must be a positive whole number of milliseconds')
end
local tokens = tonumber(ARGV[4])
if tokens == nil or tokens < 1 or tokens > 1000000 or tokens ~= math.floor(tokens) then
  return redis.error_reply('ERR warden acquire: reserve 1 to 1000000 tokens')
end
if ARGV[6] ~= 'PUBLISH' and ARGV[6] ~= 'SPUBLISH' then
  return redis.error_reply('ERR warden acquire: publish with PUBLISH or SPUBLISH')
end
local pttl = redis.call('PTTL', KEYS[1])
if pttl ~= -2 then
  redis.call('SET', KEYS[3], '1', 'PX', ARGV[3])
  redis.call(ARGV[6], ARGV[5], '1')
  return {0, pttl, 0}
end
-- While a contender of another client waits (its marker lives), no block is reserved: a grant that
-- reserves only its own token is not kept, so a client that keeps leases never outruns the others.
if tokens > 1 and redis.call('EXISTS', KEYS[3]) == 1 then tokens = 1 end
local time = redis.call('TIME')
local token = (tonumber(redis.call('GET', KEYS[2])) or 0) + 1
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
if now > token then token = now end
local last = token + tokens - 1
if last > now + 1000 then last = math.max(token, now + 1000) end
local text = string.format('%d', token)
redis.call('SET', KEYS[2], string.format('%d', last))
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. text, 'PX', ARGV[2])
return {1, token, last}
