package dev.warden.lock.jdbc;

import dev.warden.lock.tck.BackendArchitecture;

class JdbcArchitectureTest extends BackendArchitecture {

    @Override
    protected String backend() {
        return "jdbc";
    }
}
