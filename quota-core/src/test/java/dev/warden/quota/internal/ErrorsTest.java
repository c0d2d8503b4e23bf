package dev.warden.quota.internal;

import dev.warden.quota.QuotaException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisNoScriptException;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ErrorsTest {

    @Test
    void aMissingScriptOrARefusalIsUnavailableNeverProtocol() {
        for (String reply : List.of("NOSCRIPT No matching script.", "TRYAGAIN Multiple keys request during rehashing of slot",
                "CLUSTERDOWN The cluster is down", "READONLY You can't write against a read only replica.",
                "LOADING Redis is loading", "MASTERDOWN Link with MASTER is down")) {
            RuntimeException e = Errors.translate("redis://h:1", "deduct m", new RedisCommandExecutionException(reply));
            assertThat(((QuotaException) e).reason()).as(reply).isEqualTo(QuotaException.Reason.UNAVAILABLE);
        }
        RuntimeException noScript = Errors.translate("redis://h:1", "deduct m", new RedisNoScriptException("NOSCRIPT No matching script"));
        assertThat(((QuotaException) noScript).reason()).isEqualTo(QuotaException.Reason.UNAVAILABLE);
        RuntimeException syntax = Errors.translate("redis://h:1", "deduct m", new RedisCommandExecutionException("ERR syntax error"));
        assertThat(((QuotaException) syntax).reason()).isEqualTo(QuotaException.Reason.PROTOCOL);
    }
}
