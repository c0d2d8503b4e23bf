package dev.warden.redis.internal;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.Test;

import javax.net.ssl.SSLHandshakeException;
import java.util.concurrent.CompletionException;

import static org.assertj.core.api.Assertions.assertThat;

class RedisFailuresTest {

    @Test
    void denialFoundUnderCausesAndAmongSuppressed() {
        RedisCommandExecutionException refused = new RedisCommandExecutionException("WRONGPASS invalid username-password pair");
        assertThat(RedisFailures.denial(new CompletionException(new RedisConnectionException("Unable to connect", refused))))
                .isEqualTo("WRONGPASS invalid username-password pair");
        // A Sentinel lookup that failed on every sentinel: each sentinel's answer is suppressed on the outer error.
        RedisConnectionException lookup = new RedisConnectionException("Cannot provide redisAddress using sentinel");
        lookup.addSuppressed(new RedisConnectionException("Currently not connected"));
        lookup.addSuppressed(new RedisConnectionException("Unable to connect", new RedisCommandExecutionException("NOPERM no permission")));
        assertThat(RedisFailures.denial(lookup)).isEqualTo("NOPERM no permission");
    }

    @Test
    void noDenialInOtherErrors() {
        assertThat(RedisFailures.denial(new RedisConnectionException("Connection refused"))).isNull();
        // A message that merely mentions a code is not the server's refusal.
        assertThat(RedisFailures.denial(new RedisConnectionException("see WRONGPASS"))).isNull();
        assertThat(RedisFailures.denial(new IllegalStateException("WRONGPASS"))).isNull();
        assertThat(RedisFailures.denial(null)).isNull();
    }

    @Test
    void denialSearchEndsOnASelfSuppressingLoop() {
        RedisConnectionException a = new RedisConnectionException("a");
        RedisConnectionException b = new RedisConnectionException("b", a);
        a.addSuppressed(b);
        assertThat(RedisFailures.denial(b)).isNull();
    }

    @Test
    void handshakeLostIsLettucesTwoReports() {
        assertThat(RedisFailures.handshakeLost(new CompletionException(
                new IllegalStateException("RedisHandshakeHandler not registered")))).isTrue();
        assertThat(RedisFailures.handshakeLost(new RedisConnectionException("Unable to connect",
                new RedisConnectionException("Connection closed prematurely")))).isTrue();
        assertThat(RedisFailures.handshakeLost(new RedisConnectionException("Connection refused"))).isFalse();
        assertThat(RedisFailures.handshakeLost(new IllegalStateException("Connection closed prematurely"))).isFalse();
    }

    @Test
    void aSentinelLookupThatNeverAskedIsAskedAgainButARefusedOneIsNot() {
        RedisConnectionException unasked = new RedisConnectionException("Cannot obtain master using SENTINEL MASTER");
        unasked.addSuppressed(new RedisException("Currently not connected. Commands are rejected."));
        assertThat(RedisFailures.handshakeLost(new CompletionException(unasked))).isTrue();

        RedisConnectionException refused = new RedisConnectionException("Cannot obtain master using SENTINEL MASTER");
        refused.addSuppressed(new RedisException("Currently not connected. Commands are rejected."));
        refused.addSuppressed(new RedisCommandExecutionException("WRONGPASS invalid username-password pair"));
        assertThat(RedisFailures.handshakeLost(refused)).isFalse();
        assertThat(RedisFailures.denial(refused)).startsWith("WRONGPASS");

        assertThat(RedisFailures.handshakeLost(new RedisConnectionException("Cannot obtain master using SENTINEL MASTER")))
                .as("no sentinel's answer at all: not this case").isFalse();
    }

    @Test
    void tlsFailureNamesTheHandshakesError() {
        assertThat(RedisFailures.tlsFailure(new RedisConnectionException("Unable to connect",
                new SSLHandshakeException("PKIX path building failed")))).isEqualTo("PKIX path building failed");
        assertThat(RedisFailures.tlsFailure(new RedisConnectionException("Connection refused"))).isNull();
    }

    @Test
    void refusedBeforeRunningIsTheServersRefusalsAndOnRequestAnUnsentCommand() {
        assertThat(RedisFailures.refusedBeforeRunning(new CompletionException(
                new RedisCommandExecutionException("TRYAGAIN Multiple keys request during rehashing of slot")), false)).isTrue();
        assertThat(RedisFailures.refusedBeforeRunning(new RedisNoScriptException("NOSCRIPT No matching script"), false)).isTrue();
        assertThat(RedisFailures.refusedBeforeRunning(new RedisCommandExecutionException("ERR user_script:1: boom"), true)).isFalse();
        // A timeout may have run the script: never sent again.
        assertThat(RedisFailures.refusedBeforeRunning(new RedisCommandTimeoutException("Command timed out"), true)).isFalse();
        RedisException unsent = new RedisException("Currently not connected. Commands are rejected.");
        assertThat(RedisFailures.refusedBeforeRunning(unsent, true)).isTrue();
        assertThat(RedisFailures.refusedBeforeRunning(unsent, false)).isFalse();
    }

    @Test
    void codeIsTheFirstWord() {
        assertThat(RedisFailures.code(new RedisCommandExecutionException("OOM command not allowed"))).isEqualTo("OOM");
        assertThat(RedisFailures.code(new RedisCommandExecutionException("BUSY"))).isEqualTo("BUSY");
        assertThat(RedisFailures.code(new RedisCommandExecutionException((String) null))).isEmpty();
    }

    @Test
    void userInfoGivesAPasswordOrAUserAndPassword() {
        RedisCredentials passwordOnly = build("s%3Acret");
        assertThat(passwordOnly.getUsername()).isNull();
        assertThat(new String(passwordOnly.getPassword())).isEqualTo("s:cret");
        RedisCredentials both = build("app:p%40ss");
        assertThat(both.getUsername()).isEqualTo("app");
        assertThat(new String(both.getPassword())).isEqualTo("p@ss");
        RedisCredentials emptyUser = build(":pw");
        assertThat(emptyUser.getUsername()).isNull();
        assertThat(new String(emptyUser.getPassword())).isEqualTo("pw");
        assertThat(build("").hasPassword()).isFalse();
    }

    private static RedisCredentials build(String userInfo) {
        RedisURI.Builder b = RedisURI.builder().withHost("127.0.0.1").withPort(6379);
        UserInfo.applyTo(b, userInfo);
        return b.build().getCredentialsProvider().resolveCredentials().block();
    }
}
