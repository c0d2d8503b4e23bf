package dev.warden.lock.spi;

/** A backend's record of one granted lock; drivers carry whatever they need to renew and release it. */
public interface Grant {

    /** The fencing token of this grant, strictly increasing per lock name across clients. */
    long fencingToken();
}
