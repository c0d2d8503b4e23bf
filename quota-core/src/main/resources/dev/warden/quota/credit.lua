#!lua flags=
-- Top up or refund, atomically. No allow-oom flag, so a server over maxmemory refuses the script
-- before it starts.
-- KEYS: marker, account, request record, journal
-- ARGV: account, amount, request id, kind ('topup' or 'refund'), retention ms, marker value
-- Order: validate -> partition marker -> idempotency -> account -> balance limit; then writes:
-- increment, journal XADD, request record.
local account, amount_text, request, kind, retention, expected =
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]

local bad = change_problem(account, request, amount_text)
if bad then return bad end
if kind ~= 'topup' and kind ~= 'refund' then return {'invalid_argument', 'kind'} end
if not positive_integer(retention) then return {'invalid_argument', 'retention'} end
local base = partition_base(KEYS[1])
if not base or KEYS[2] ~= base .. ':acct:' .. account or KEYS[3] ~= base .. ':req:' .. account .. ':' .. request
    or KEYS[4] ~= base .. ':journal' then
  return {'invalid_argument', 'keys'}
end

local problem = marker_problem(KEYS[1], expected)
if problem then return problem end

local replay = replay_reply(KEYS[3], kind, account, amount_text)
if replay then return replay end

local balance = redis.call('HGET', KEYS[2], 'balance')
if not balance then return {'not_found'} end
-- A split account's quota is in its buckets (buckets.lua): the caller routes there instead.
local split = redis.call('HGET', KEYS[2], 'buckets')
if split then return {'split', split} end
if not string.find(balance, '^[0-9]+$') then return {'corrupt', balance} end
-- Both are at most 2^53-1, so the difference is exact in a double.
if tonumber(amount_text) > tonumber(MAX_AMOUNT) - tonumber(balance) then
  return {'invalid_amount', 'BALANCE_OVERFLOW'}
end

-- Every check is done; writes start here.
local after = canonical(redis.call('HINCRBY', KEYS[2], 'balance', amount_text))
local entry = redis.call('XADD', KEYS[4], '*', 'account', account, 'kind', kind, 'amount', amount_text,
  'request', request, 'balance', after, 'token', '-')
redis.call('SET', KEYS[3], kind .. '|' .. amount_text .. '|' .. after .. '|' .. entry .. '|' .. account,
  'PX', retention)
return {'applied', after, entry}
