-- One poll of a shared name's entry: removes expired entries ahead of it, enters or refreshes the
-- entry, and grants it when the weights of the live entries ahead of it plus its own are at most its
-- limit (Share.fitsBehind). Entries keep arrival order and a waiting entry counts against every later
-- one, so nothing barges.
-- KEYS[1] queue (sorted set: entry id, scored by its token)
-- KEYS[2] entries (hash: entry id to token|weight|limit|expires at (ms of this server's clock)|granted
--         (1/0)|removals seen by its last poll; and the field 'totals': the sum of all entries' weights|
--         how many entries were removed since the queue was last empty)
-- KEYS[3] fence (the last token taken; never expires)
-- ARGV[1] entry id (owner#attempt), ARGV[2] weight, ARGV[3] limit, ARGV[4] TTL in milliseconds,
-- ARGV[5] channel, ARGV[6] PUBLISH or SPUBLISH
-- Returns {1, token, -1} when granted; {0, token, ms until the soonest expiry among the entries read
-- that keep it waiting}.
--
-- An entry lives until its expiry, which its own polls (while waiting) and renewals (once granted) push
-- on by the TTL; an expired one is removed by the next script that reads it, and a caller whose own
-- entry expired enters again at the back. Removing an entry publishes, as a release does, so the
-- attempts behind it poll. A new entry's token is taken as acquire.lua takes a lock's: the larger of
-- the last + 1 and the server's clock in microseconds, so tokens follow arrival, the queue's order.
--
-- What a poll reads (the answer is the same as adding up every live entry ahead):
-- * When the sum of all weights fits the caller's limit, so does what is ahead of it: nothing is read
--   (a reader beside readers, a permit while permits are free). The sum only ever overcounts (expired
--   entries not yet removed, an unreadable entry dropped without its weight); past 2^52 it is pinned
--   far above any limit until the queue empties, so rounding never makes it undercount.
-- * Otherwise it reads from its entry towards the head, and stops at the first live entry that makes
--   the sum too large (weights only add), or at a waiting entry whose last poll found it did not fit
--   and saw every removal made since (nothing ahead of it has left since, so more than its limit is
--   still ahead of it): a reader behind a waiting writer, or a permit request behind another one,
--   reads one entry. An expired entry is removed when a walk reaches it, before it is counted.
local TOTALS = 'totals'
local BIG = 4611686018427387904
local weight, limit, ttl = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if ttl == nil or ttl < 1 or ttl ~= math.floor(ttl) then
  return redis.error_reply('ERR warden shared poll: TTL must be a positive whole number of milliseconds')
end
if limit == nil or limit < 1 or limit ~= math.floor(limit) or weight == nil or weight < 1 or weight > limit
    or weight ~= math.floor(weight) then
  return redis.error_reply('ERR warden shared poll: the weight must be a whole number within 1..limit')
end
if ARGV[6] ~= 'PUBLISH' and ARGV[6] ~= 'SPUBLISH' then
  return redis.error_reply('ERR warden shared poll: publish with PUBLISH or SPUBLISH')
end
if not string.match(ARGV[1], '#%d+$') then
  return redis.error_reply('ERR warden shared poll: the entry id must end in #<digits>')
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local total, removals = 0, 0
local totals = redis.call('HGET', KEYS[2], TOTALS)
if totals then
  local t, r = string.match(totals, '^(%d+)|(%d+)$')
  total, removals = tonumber(t) or BIG, tonumber(r) or 0
end
local totalsBefore, removalsBefore = total, removals

local function parse(value)
  local token, w, l, expires, granted, seen = string.match(value, '^(%d+)|(%d+)|(%d+)|(%d+)|([01])|(%d+)$')
  return token, tonumber(w), tonumber(l), tonumber(expires), granted, tonumber(seen)
end

local function drop(id, w)
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  if w then total = total - w end
  removals = removals + 1
end

local id = ARGV[1]
local token, granted
local value = redis.call('HGET', KEYS[2], id)
if value then
  local t, w, l, expires, g = parse(value)
  if t and expires > now then
    token, granted = t, g
  else
    drop(id, w)
  end
end
if not token then
  local next = (tonumber(redis.call('GET', KEYS[3])) or 0) + 1
  local micros = tonumber(time[1]) * 1000000 + tonumber(time[2])
  if micros > next then next = micros end
  token = string.format('%d', next)
  redis.call('SET', KEYS[3], token)
  redis.call('ZADD', KEYS[1], token, id)
  granted = '0'
  total = total + weight
  if total > 4503599627370496 then total = BIG end
end

local soonest = -1
if granted ~= '1' then
  local fits = total <= limit
  if not fits then
    -- Pages of 4 entries first (most walks stop at once), then of 64.
    local ahead, upTo, size, page = 0, '(' .. token, 4, nil
    fits = true
    repeat
      if page then size = 64 end
      page = redis.call('ZREVRANGEBYSCORE', KEYS[1], upTo, '-inf', 'WITHSCORES', 'LIMIT', 0, size)
      for i = 1, #page, 2 do
        local other = page[i]
        upTo = '(' .. page[i + 1]
        local v = redis.call('HGET', KEYS[2], other)
        local t, w, l, expires, g, seen
        if v then t, w, l, expires, g, seen = parse(v) end
        if not t or expires <= now then
          drop(other, w)
        else
          ahead = ahead + w
          if soonest < 0 or expires - now < soonest then soonest = expires - now end
          -- Its own verdict still holds when it saw every removal before this script (this script's
          -- removals were all behind it): at least its limit - its weight + 1 is ahead of it.
          if ahead + weight > limit
              or (g == '0' and seen == removalsBefore and ahead + (l - w + 1) + weight > limit) then
            fits = false
            break
          end
        end
      end
    until not fits or #page < 2 * size
  end
  if fits then
    granted, soonest = '1', -1
  end
end

redis.call('HSET', KEYS[2], id, token .. '|' .. string.format('%d', weight) .. '|' .. string.format('%d', limit) .. '|'
    .. string.format('%d', now + ttl) .. '|' .. granted .. '|' .. string.format('%d', removals))
if total ~= totalsBefore or removals ~= removalsBefore then
  redis.call('HSET', KEYS[2], TOTALS, string.format('%d', total) .. '|' .. string.format('%d', removals))
end
-- The keys outlive every entry in them, and go when the last entry would have expired.
for i = 1, 2 do
  if redis.call('PTTL', KEYS[i]) < ttl then
    redis.call('PEXPIRE', KEYS[i], ttl)
  end
end
if removals ~= removalsBefore then
  redis.call(ARGV[6], ARGV[5], 'expired')
end
return {granted == '1' and 1 or 0, tonumber(token), soonest}
