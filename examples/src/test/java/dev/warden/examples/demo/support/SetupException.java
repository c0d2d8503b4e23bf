package dev.warden.examples.demo.support;

/** A server could not be started or reached, or a file could not be read: a message for people, no stack trace. */
public final class SetupException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public SetupException(String message) {
        super(message);
    }

    public SetupException(String message, Throwable cause) {
        super(message, cause);
    }
}
