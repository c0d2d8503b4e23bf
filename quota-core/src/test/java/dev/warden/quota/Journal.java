package dev.warden.quota;

import dev.warden.testkit.RedisServer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Reads journal streams and raw keys straight from the server, bypassing the client under test. */
final class Journal {

    /** One journal entry. */
    record Entry(String id, String account, String kind, long amount, String request, long balance, String token) {
    }

    private Journal() {
    }

    static List<Entry> read(RedisServer server, String streamKey) {
        List<Entry> entries = new ArrayList<>();
        String start = "-";
        while (true) {
            Object reply = server.command("XRANGE", streamKey, start, "+", "COUNT", "2000");
            List<?> page = (List<?>) reply;
            if (page.isEmpty()) {
                return entries;
            }
            for (Object item : page) {
                List<?> pair = (List<?>) item;
                String id = (String) pair.get(0);
                List<?> fields = (List<?>) pair.get(1);
                Map<String, String> f = new HashMap<>();
                for (int i = 0; i + 1 < fields.size(); i += 2) {
                    f.put((String) fields.get(i), (String) fields.get(i + 1));
                }
                entries.add(new Entry(id, f.get("account"), f.get("kind"), Long.parseLong(f.get("amount")),
                        f.get("request"), Long.parseLong(f.get("balance")), f.get("token")));
                start = "(" + id;
            }
        }
    }

    /** Every entry of every partition. */
    static List<Entry> readAll(RedisServer server, int partitions) {
        return readAll(key -> server, partitions);
    }

    /** Every entry of every partition, each read from the node that holds it. */
    static List<Entry> readAll(java.util.function.Function<String, RedisServer> nodeOf, int partitions) {
        List<Entry> all = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            String key = "quota:{p" + p + "}:journal";
            all.addAll(read(nodeOf.apply(key), key));
        }
        return all;
    }

    static long length(RedisServer server, String streamKey) {
        return (Long) server.command("XLEN", streamKey);
    }

    static String balanceField(RedisServer server, String accountKey) {
        return (String) server.command("HGET", accountKey, "balance");
    }
}
