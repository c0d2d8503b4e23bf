package dev.warden.testkit;

/**
 * An error reply from Redis ({@code -ERR ...}, {@code -WRONGTYPE ...}, {@code -NOSCRIPT ...}), so a
 * test can tell a server-side refusal from a network failure, which surfaces as
 * {@link java.io.UncheckedIOException}.
 */
public class RedisReplyException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * An error reply.
     *
     * @param message the error line as the server sent it, without the leading {@code -}
     */
    public RedisReplyException(String message) {
        super(message);
    }

    /** The error's first word, such as {@code ERR}, {@code WRONGTYPE}, {@code NOSCRIPT} or {@code LOADING}. */
    public String code() {
        String message = getMessage();
        int space = message.indexOf(' ');
        return space < 0 ? message : message.substring(0, space);
    }
}
