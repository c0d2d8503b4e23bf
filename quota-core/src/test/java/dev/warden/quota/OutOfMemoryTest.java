package dev.warden.quota;

import dev.warden.quota.redis.KeyLayout;
import dev.warden.quota.internal.Scripts;
import dev.warden.testkit.RedisReplyException;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.ThrowingSupplier;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A server over its maxmemory with noeviction: the write scripts declare no allow-oom flag, so
 * Redis refuses them before they start: a typed error, and nothing half-written.
 */
class OutOfMemoryTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension(
            RedisServer.builder().config("maxmemory-policy", "noeviction"));

    static final KeyLayout LAYOUT = new KeyLayout(16);
    static QuotaService quota;

    @BeforeAll
    static void connect() {
        quota = QuotaService.create(ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.server().uri())));
    }

    @AfterAll
    static void close() {
        quota.close();
    }

    @AfterEach
    void lift() {
        redis.server().command("CONFIG", "SET", "maxmemory", "0");
    }

    static QuotaException.Reason reasonOf(ThrowingSupplier<?> call) {
        Throwable t = catchThrowable(call::get);
        if (t instanceof ExecutionException e) {
            t = e.getCause();
        }
        assertThat(t).isInstanceOf(QuotaException.class);
        return ((QuotaException) t).reason();
    }

    @Test
    @DisplayName("every write is refused with OUT_OF_MEMORY; balance, request record and journal are unchanged")
    void refusedBeforeStarting() {
        String account = "m-" + UUID.randomUUID();
        String request = "order-" + UUID.randomUUID();
        quota.open(account, 1_000);
        quota.deduct(account, 100, UUID.randomUUID().toString());
        List<Object> before = state(account, request);

        redis.server().command("CONFIG", "SET", "maxmemory", "1");

        assertThat(reasonOf(() -> quota.deduct(account, 5, request))).isEqualTo(QuotaException.Reason.OUT_OF_MEMORY);
        assertThat(reasonOf(() -> quota.deductAsync(account, 5, request).toCompletableFuture().get(10, TimeUnit.SECONDS)))
                .isEqualTo(QuotaException.Reason.OUT_OF_MEMORY);
        assertThat(reasonOf(() -> quota.deductAll(List.of(new Deduction(account, 5, request)))))
                .isEqualTo(QuotaException.Reason.OUT_OF_MEMORY);
        assertThat(reasonOf(() -> quota.topUp(account, 5, request))).isEqualTo(QuotaException.Reason.OUT_OF_MEMORY);
        assertThat(reasonOf(() -> quota.refund(account, 5, request))).isEqualTo(QuotaException.Reason.OUT_OF_MEMORY);
        String other = "m-" + UUID.randomUUID();
        assertThat(reasonOf(() -> quota.open(other, 5))).isEqualTo(QuotaException.Reason.OUT_OF_MEMORY);
        assertThat(quota.balance(account)).as("the read-only script still runs").hasValue(900);

        // The script itself, bypassing Java: refused by the server before it starts.
        int p = LAYOUT.partition(account);
        Throwable raw = catchThrowable(() -> redis.server().command("EVALSHA", Scripts.digest(Scripts.Script.DEDUCT), "4",
                LAYOUT.marker(p), LAYOUT.accountKey(account), LAYOUT.requestKey(account, request), LAYOUT.journal(p),
                account, "5", request, "-", "60000", LAYOUT.markerValue()));
        assertThat(raw).isInstanceOf(RedisReplyException.class);
        assertThat(((RedisReplyException) raw).code()).isEqualTo("OOM");

        assertThat(state(account, request)).isEqualTo(before);
        assertThat(redis.server().command("EXISTS", LAYOUT.accountKey(other))).isEqualTo(0L);

        redis.server().command("CONFIG", "SET", "maxmemory", "0");
        assertThat(quota.deduct(account, 5, request)).isInstanceOf(Outcome.Applied.class);
        assertThat(quota.balance(account)).hasValue(895);
    }

    static List<Object> state(String account, String request) {
        RedisServer server = redis.server();
        return List.of(server.command("HGETALL", LAYOUT.accountKey(account)),
                server.command("EXISTS", LAYOUT.requestKey(account, request)),
                server.command("XLEN", LAYOUT.journalOf(account)),
                server.command("DBSIZE"));
    }
}
