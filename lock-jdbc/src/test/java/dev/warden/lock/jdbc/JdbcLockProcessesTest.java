package dev.warden.lock.jdbc;

import dev.warden.lock.tck.SharedRecipeProcessesTest;
import dev.warden.testkit.PostgresServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

@DisplayName("jdbc: a lock, a semaphore and a read-write lock across processes")
class JdbcLockProcessesTest extends SharedRecipeProcessesTest {

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension(LockTable.server());

    @Override
    protected Map<String, Object> settings() {
        return LockTable.settings(postgres.server());
    }
}
