package dev.warden.lock.jdbc;

import dev.warden.testkit.PostgresServer;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;

/** The lock table read and changed directly, over JDBC of its own, not through Warden: what the tests check against. */
final class LockTable {

    private LockTable() {
    }

    /** The settings of a client of {@code server}'s database. */
    static Map<String, Object> settings(PostgresServer server) {
        return Map.of("warden.lock.backend", "jdbc",
                "warden.lock.endpoints", "jdbc:postgresql://" + server.host() + ":" + server.port() + "/" + server.database(),
                "warden.lock.jdbc.username", server.user(),
                "warden.lock.jdbc.pool-size", 4);
    }

    /** A server with room for the kit's many clients (each a pool and a listening connection). */
    static PostgresServer.Builder server() {
        return PostgresServer.builder().setting("max_connections", "500");
    }

    static boolean held(PostgresServer server, String namespace, String name) {
        return query(server, "SELECT 1 FROM warden_lock WHERE namespace = ? AND name = ? AND owner IS NOT NULL"
                + " AND expires_at > clock_timestamp()", namespace, name);
    }

    static void delete(PostgresServer server, String namespace, String name) {
        update(server, "DELETE FROM warden_lock WHERE namespace = ? AND name = ?", namespace, name);
    }

    static boolean query(PostgresServer server, String sql, String... params) {
        try (Connection c = connect(server); PreparedStatement s = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                s.setString(i + 1, params[i]);
            }
            try (ResultSet r = s.executeQuery()) {
                return r.next();
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    static int update(PostgresServer server, String sql, String... params) {
        try (Connection c = connect(server); PreparedStatement s = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                s.setString(i + 1, params[i]);
            }
            return s.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    static Connection connect(PostgresServer server) throws SQLException {
        return DriverManager.getConnection("jdbc:postgresql://" + server.host() + ":" + server.port() + "/"
                + server.database() + "?user=" + server.user());
    }
}
