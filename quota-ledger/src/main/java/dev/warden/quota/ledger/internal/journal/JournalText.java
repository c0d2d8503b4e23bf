package dev.warden.quota.ledger.internal.journal;

import dev.warden.quota.ledger.journal.JournalEntry;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Decodes the text of journal reads: a read of new entries brings some thirteen strings per entry, and the
 * connection's codec wraps each in a Netty buffer before decoding it, which cost the read's I/O thread more
 * than the rest of the read. Copying the bytes out and decoding them as UTF-8 gives the same strings.
 * Encodes as {@link StringCodec#UTF8}. Thread-safe: stateless.
 */
final class JournalText implements RedisCodec<String, String> {

    static final JournalText CODEC = new JournalText();

    private static final String[] NAMES = JournalEntry.FIELDS.toArray(String[]::new);

    private JournalText() {
    }

    /** A field name the scripts write is given as the one constant: no string to make, its hash known. */
    @Override
    public String decodeKey(ByteBuffer bytes) {
        if (bytes != null) {
            for (String name : NAMES) {
                if (is(bytes, name)) {
                    return name;
                }
            }
        }
        return text(bytes);
    }

    private static boolean is(ByteBuffer bytes, String name) {
        if (bytes.remaining() != name.length()) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            if (bytes.get(bytes.position() + i) != name.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String decodeValue(ByteBuffer bytes) {
        return text(bytes);
    }

    @Override
    public ByteBuffer encodeKey(String key) {
        return StringCodec.UTF8.encodeKey(key);
    }

    @Override
    public ByteBuffer encodeValue(String value) {
        return StringCodec.UTF8.encodeValue(value);
    }

    private static String text(ByteBuffer bytes) {
        if (bytes == null) {
            return null;
        }
        byte[] copy = new byte[bytes.remaining()];
        bytes.get(bytes.position(), copy); // absolute: the buffer's position is the reader's
        return new String(copy, StandardCharsets.UTF_8);
    }
}
