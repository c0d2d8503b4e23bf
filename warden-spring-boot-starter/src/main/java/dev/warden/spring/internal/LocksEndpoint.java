package dev.warden.spring.internal;

import dev.warden.lock.LockAdmin;
import dev.warden.lock.LockClient;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The actuator endpoint {@code wardenlocks} over the application's lock client's {@link LockAdmin}:
 * {@code GET /actuator/wardenlocks} lists the namespace's holders, {@code GET /actuator/wardenlocks/{name}}
 * shows a lock's holder (404 when free), and
 * {@code DELETE /actuator/wardenlocks/{name}?token=&operator=&why=} force-releases that hold, audited as
 * {@link LockAdmin#forceRelease} is. Like every actuator endpoint it is exposed only when configured
 * ({@code management.endpoints.web.exposure.include}); a forced release ends another process's hold, so
 * put it behind the same access control as the application's other operational endpoints.
 */
@Endpoint(id = "wardenlocks")
public final class LocksEndpoint {

    private final LockClient locks;

    public LocksEndpoint(LockClient locks) {
        this.locks = locks;
    }

    /** Every held lock of the client's namespace, by name: name, holder id, token. */
    @ReadOperation
    public List<Map<String, Object>> holders() {
        return locks.admin().holders().stream().map(LocksEndpoint::body).toList();
    }

    /** The holder of {@code name}: its holder id and token; null (404) when the lock is free. */
    @ReadOperation
    public Map<String, Object> holder(@Selector String name) {
        return locks.admin().holder(name).map(LocksEndpoint::body).orElse(null);
    }

    private static Map<String, Object> body(LockAdmin.Holding h) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", h.name());
        body.put("holderId", h.holderId());
        body.put("token", h.token());
        return body;
    }

    /** Ends the hold of {@code name} whose token is {@code token}; {@code released} says whether it did. */
    @DeleteOperation
    public Map<String, Object> forceRelease(@Selector String name, long token, String operator, String why) {
        boolean released = locks.admin().forceRelease(name, token, operator, why);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", name);
        body.put("token", token);
        body.put("released", released);
        return body;
    }
}
