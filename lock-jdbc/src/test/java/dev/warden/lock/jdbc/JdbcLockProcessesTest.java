package dev.warden.lock.jdbc;

import dev.warden.lock.tck.LockProcessesTest;
import dev.warden.testkit.PostgresServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

@DisplayName("jdbc: one lock across processes")
class JdbcLockProcessesTest extends LockProcessesTest {

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension(LockTable.server());

    @Override
    protected Map<String, Object> settings() {
        return LockTable.settings(postgres.server());
    }
}
