-- Shared by every quota script; Scripts.java inserts it after each script's shebang line.
-- Nothing here writes. Every check a script makes runs before its first write, because a Lua
-- error does not roll back the writes made before it.
--
-- Key layout (all keys of one call share the hash tag {p<N>}, so they live in one Cluster slot):
--   quota:{p<N>}:marker            partition marker, written when an account is opened
--   quota:{p<N>}:acct:<account>    hash: balance, fence (the highest fencing token seen)
--   quota:{p<N>}:req:<account>:<requestId>   idempotency record, expires after the retention
--                                  (request ids are unique per account: two accounts may share one)
-- A namespace, when configured, prefixes every key ('<namespace>:quota:{p<N>}:...'); it never holds
-- braces, so the hash tag is always the partition's.
--   quota:{p<N>}:journal           stream of applied changes
-- Replies are arrays of bulk strings whose first element names the outcome. Numbers go to redis.call
-- as the canonical digit strings received or built with %d, never as Lua numbers (which Redis would
-- format as floating point text).

local MAX_AMOUNT = '9007199254740991' -- 2^53-1, 16 digits
local MAX_TOKEN = '9223372036854775807' -- 2^63-1, 19 digits
local MAX_ID_BYTES = 128

-- nil when the text is a canonical amount (1..2^53-1, or 0 when allow_zero); else the problem.
local function amount_problem(s, allow_zero)
  if s == nil or s == '' then return 'EMPTY' end
  if not string.find(s, '^[0-9]+$') then
    if string.find(s, '%s') then return 'WHITESPACE' end
    local first = string.sub(s, 1, 1)
    if first == '-' then return 'NEGATIVE' end
    if first == '+' then return 'SIGN' end
    if string.find(s, '^0[xX]') then return 'HEX' end
    if string.find(s, '^[0-9]+[.,][0-9]*$') then return 'FRACTION' end
    if string.find(s, '^[0-9.]+[eE]') then return 'EXPONENT' end
    local lower = string.lower(s)
    if lower == 'inf' or lower == 'infinity' or lower == 'nan' then return 'NOT_FINITE' end
    return 'MALFORMED'
  end
  if string.find(s, '^0+$') then
    if allow_zero and s == '0' then return nil end
    return 'ZERO'
  end
  if string.sub(s, 1, 1) == '0' then return 'LEADING_ZERO' end
  if #s > #MAX_TOKEN or (#s == #MAX_TOKEN and s > MAX_TOKEN) then return 'BEYOND_LONG' end
  if #s > #MAX_AMOUNT or (#s == #MAX_AMOUNT and s > MAX_AMOUNT) then return 'TOO_LARGE' end
  return nil
end

-- nil when the text is a valid account or request id; else the problem.
local function id_problem(s)
  if s == nil or s == '' then return 'EMPTY' end
  if #s > MAX_ID_BYTES then return 'TOO_LONG' end
  if string.find(s, '[%z\1-\31\127]') then return 'CONTROL_CHARACTER' end
  -- C1 controls (U+0080..U+009F) are two bytes in UTF-8: 0xC2 0x80..0x9F.
  if string.find(s, '\194[\128-\159]') then return 'CONTROL_CHARACTER' end
  if string.find(s, '[:{}]') then return 'RESERVED_CHARACTER' end
  return nil
end

-- A fencing token is '-' (none) or a canonical decimal 0..2^63-1.
local function token_ok(s)
  if s == '-' or s == '0' then return true end
  if not string.find(s, '^[1-9][0-9]*$') then return false end
  return #s < #MAX_TOKEN or (#s == #MAX_TOKEN and s <= MAX_TOKEN)
end

-- Exact comparison of two canonical decimal strings (no doubles, so 64-bit tokens compare right).
local function decimal_less(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end

local function positive_integer(s)
  return s ~= nil and string.find(s, '^[1-9][0-9]*$') ~= nil and #s <= 15
end

-- The keys must be exactly the ones the ids name, under one partition tag taken from KEYS[1]
-- (after the namespace, if any).
local function partition_base(marker_key)
  return string.match(marker_key, '^([^{}]*quota:{p[0-9]+}):marker$')
end

-- {'no_marker'} when the partition has no marker (Redis lost its data, or nothing was ever
-- opened there); {'marker_mismatch', value} when it was written for another partition count.
local function marker_problem(marker_key, expected)
  local marker = redis.call('GET', marker_key)
  if not marker then return {'no_marker'} end
  if marker ~= expected then return {'marker_mismatch', marker} end
  return nil
end

-- An idempotency record: kind|amount|balance|entry|account (the account last: it may hold '|').
local function parse_record(rec)
  return string.match(rec, '^([a-z]+)|([0-9]+)|([0-9]+)|([^|]*)|(.*)$')
end

local function canonical(n)
  return string.format('%d', n)
end

-- The opening checks of a change to one account under a request id: the account and request ids,
-- then the amount. The error reply, or nil.
local function change_problem(account, request, amount_text)
  local bad = id_problem(account)
  if bad then return {'invalid_id', 'ACCOUNT', bad} end
  bad = id_problem(request)
  if bad then return {'invalid_id', 'REQUEST', bad} end
  bad = amount_problem(amount_text, false)
  if bad then return {'invalid_amount', bad} end
  return nil
end

-- A request id already used: {'duplicate', balance, entry} when its record is this very change (same
-- kind, account and amount), else {'conflict', kind, amount, account} naming what it was; nil when the
-- id is unused.
local function replay_reply(record_key, kind, account, amount_text)
  local rec = redis.call('GET', record_key)
  if not rec then return nil end
  local k, amt, bal, entry, acct = parse_record(rec)
  if k == kind and acct == account and amt == amount_text then
    return {'duplicate', bal, entry}
  end
  return {'conflict', k or '?', amt or '0', acct or ''}
end
