package dev.warden.lock.memory;

import dev.warden.lock.tck.BackendArchitecture;

class MemoryArchitectureTest extends BackendArchitecture {

    @Override
    protected String backend() {
        return "memory";
    }
}
