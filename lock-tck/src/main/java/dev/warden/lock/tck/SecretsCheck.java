package dev.warden.lock.tck;

import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.testkit.CapturedOutput;

import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The secrets clause every backend's secrets tests share: creating a client must fail with a
 * {@link LockException}, and no secret may appear in the exception's chain (messages, causes,
 * suppressed) or in anything written to standard output, standard error or the log meanwhile.
 */
public final class SecretsCheck {

    private SecretsCheck() {
    }

    /** Creates a client on {@code settings}, which must fail; returns the exception once no secret is found anywhere. */
    public static LockException refusedWithout(Map<String, ?> settings, String... secrets) {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        String output = CapturedOutput.of(() -> {
            try (LockClient c = LockClient.create(settings)) {
                throw new AssertionError("connected: " + c);
            } catch (LockException e) {
                thrown.set(e);
            }
        });
        assertThat(thrown.get()).isInstanceOf(LockException.class);
        for (String secret : secrets) {
            assertThat(CapturedOutput.chain(thrown.get())).doesNotContain(secret);
            assertThat(output).doesNotContain(secret);
        }
        return (LockException) thrown.get();
    }
}
