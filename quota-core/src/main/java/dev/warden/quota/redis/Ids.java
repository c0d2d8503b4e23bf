package dev.warden.quota.redis;

import dev.warden.quota.InvalidIdException;
import dev.warden.quota.InvalidIdException.Field;
import dev.warden.quota.InvalidIdException.Problem;
import dev.warden.quota.QuotaService;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Checks account and request ids the way the scripts do (they check again, independently): 1..128
 * bytes of UTF-8, no control character (C0, DEL or C1: U+0000..U+001F, U+007F..U+009F), no {@code :},
 * <code>{</code> or <code>}</code>.
 */
public final class Ids {

    private Ids() {
    }

    /**
     * @throws InvalidIdException when {@code id} cannot be used
     * @throws NullPointerException when it is null
     */
    public static String check(Field field, String id) {
        if (id == null) {
            throw new NullPointerException(switch (field) {
                case ACCOUNT -> "account";
                case REQUEST -> "requestId";
                case HOLD -> "holdId";
                case BALANCE -> "balance";
            });
        }
        Problem problem = problem(id);
        if (problem != null) {
            throw new InvalidIdException(field, problem, (switch (field) {
                case ACCOUNT -> "account id";
                case REQUEST -> "request id";
                case HOLD -> "hold id";
                case BALANCE -> "balance name";
            }) + " '"
                    + shown(id) + "' is invalid: " + problem + " (ids are 1.." + QuotaService.MAX_ID_BYTES
                    + " bytes of UTF-8, without control characters (U+0000..U+001F, U+007F..U+009F), ':', '{' or '}')");
        }
        return id;
    }

    /**
     * Checks a balance name the way {@code post.lua} does: 1..{@value QuotaService#MAX_BALANCE_NAME_BYTES}
     * characters of {@code a-z}, {@code 0-9}, {@code _} and {@code -} (so it never meets a key's or a
     * journal line's separators).
     *
     * @throws InvalidIdException naming the problem
     * @throws NullPointerException when it is null
     */
    public static String checkBalanceName(String name) {
        Objects.requireNonNull(name, "balance");
        Problem problem = null;
        if (name.isEmpty()) {
            problem = Problem.EMPTY;
        } else if (name.length() > QuotaService.MAX_BALANCE_NAME_BYTES) {
            problem = Problem.TOO_LONG;
        } else {
            for (int i = 0; i < name.length() && problem == null; i++) {
                char c = name.charAt(i);
                if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) {
                    problem = Problem.CHARACTER_NOT_ALLOWED;
                }
            }
        }
        if (problem != null) {
            throw new InvalidIdException(Field.BALANCE, problem, "balance name '" + shown(name) + "' is invalid: "
                    + problem + " (balance names are 1.." + QuotaService.MAX_BALANCE_NAME_BYTES
                    + " characters of a-z, 0-9, '_' and '-')");
        }
        return name;
    }

    public static Problem problem(String id) {
        if (id.isEmpty()) {
            return Problem.EMPTY;
        }
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (Character.isHighSurrogate(c)) {
                if (i + 1 >= id.length() || !Character.isLowSurrogate(id.charAt(i + 1))) {
                    return Problem.MALFORMED;
                }
                i++;
            } else if (Character.isLowSurrogate(c)) {
                return Problem.MALFORMED;
            } else if (Character.isISOControl(c)) {
                return Problem.CONTROL_CHARACTER;
            } else if (c == ':' || c == '{' || c == '}') {
                return Problem.RESERVED_CHARACTER;
            }
        }
        if (id.getBytes(StandardCharsets.UTF_8).length > QuotaService.MAX_ID_BYTES) {
            return Problem.TOO_LONG;
        }
        return null;
    }

    private static String shown(String id) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < id.length() && i < 64; i++) {
            char c = id.charAt(i);
            b.append(Character.isISOControl(c) || Character.isSurrogate(c) ? String.format("\\u%04x", (int) c) : String.valueOf(c));
        }
        return id.length() > 64 ? b + "..." : b.toString();
    }
}
