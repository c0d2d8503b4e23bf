package dev.warden.redis.internal;

import io.lettuce.core.RedisURI;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/** Credentials written into an endpoint's user-info ({@code user:password@} or {@code password@}), percent-decoded. */
public final class UserInfo {

    private UserInfo() {
    }

    /** Applies {@code userInfo} (null or empty for none) to {@code b}: a password alone, or a user and a password. */
    public static void applyTo(RedisURI.Builder b, String userInfo) {
        if (userInfo == null || userInfo.isEmpty()) {
            return;
        }
        int colon = userInfo.indexOf(':');
        if (colon < 0) {
            b.withPassword(URLDecoder.decode(userInfo, StandardCharsets.UTF_8).toCharArray());
            return;
        }
        String user = URLDecoder.decode(userInfo.substring(0, colon), StandardCharsets.UTF_8);
        char[] password = URLDecoder.decode(userInfo.substring(colon + 1), StandardCharsets.UTF_8).toCharArray();
        if (user.isEmpty()) {
            b.withPassword(password);
        } else {
            b.withAuthentication(user, password);
        }
    }
}
