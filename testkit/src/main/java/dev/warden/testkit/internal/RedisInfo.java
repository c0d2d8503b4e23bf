package dev.warden.testkit.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Parses what Redis reports about itself: {@code INFO} text, {@code CLUSTER NODES}, Sentinel's field lists. */
public final class RedisInfo {

    private RedisInfo() {
    }

    /** The {@code name:value} lines of an {@code INFO} reply. */
    public static Map<String, String> fields(Object info) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String line : String.valueOf(info).split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#")) {
                fields.put(line.substring(0, colon), line.substring(colon + 1).trim());
            }
        }
        return fields;
    }

    /** A flat {@code [name, value, name, value, ...]} reply (Sentinel's) as a map. */
    public static Map<String, String> pairs(Object reply) {
        Map<String, String> map = new LinkedHashMap<>();
        List<?> list = (List<?>) reply;
        for (int i = 0; i + 1 < list.size(); i += 2) {
            map.put(String.valueOf(list.get(i)), String.valueOf(list.get(i + 1)));
        }
        return map;
    }

    /**
     * One line of {@code CLUSTER NODES}.
     *
     * @param primaryId the primary a replica follows, or null for a primary
     * @param slots the slot ranges a primary serves, e.g. {@code 0-5460}
     */
    public record ClusterNode(String id, int port, boolean myself, boolean primary, boolean failing, String primaryId,
                              boolean connected, List<String> slots) {
    }

    /** Parses a {@code CLUSTER NODES} reply. */
    public static List<ClusterNode> clusterNodes(Object reply) {
        List<ClusterNode> nodes = new ArrayList<>();
        for (String line : String.valueOf(reply).split("\r?\n")) {
            String[] f = line.trim().split(" ");
            if (f.length < 8) {
                continue;
            }
            String address = f[1];
            int at = address.indexOf('@');
            String hostPort = at < 0 ? address : address.substring(0, at);
            int port = Integer.parseInt(hostPort.substring(hostPort.lastIndexOf(':') + 1));
            List<String> flags = List.of(f[2].split(","));
            List<String> slots = new ArrayList<>();
            for (int i = 8; i < f.length; i++) {
                if (!f[i].startsWith("[")) {
                    slots.add(f[i]);
                }
            }
            nodes.add(new ClusterNode(f[0], port, flags.contains("myself"), flags.contains("master"),
                    flags.contains("fail") || flags.contains("fail?"), "-".equals(f[3]) ? null : f[3],
                    "connected".equals(f[7]), List.copyOf(slots)));
        }
        return nodes;
    }

    /** Whether {@code slot} lies in one of {@code ranges} ({@code 5} or {@code 0-5460}). */
    public static boolean covers(List<String> ranges, int slot) {
        for (String r : ranges) {
            int dash = r.indexOf('-');
            int from = Integer.parseInt(dash < 0 ? r : r.substring(0, dash));
            int to = dash < 0 ? from : Integer.parseInt(r.substring(dash + 1));
            if (slot >= from && slot <= to) {
                return true;
            }
        }
        return false;
    }

    /** The Redis Cluster hash slot of {@code key}: CRC16 (XMODEM) of its hash tag, modulo 16384. */
    public static int slot(String key) {
        byte[] bytes = key.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        int start = 0;
        int end = bytes.length;
        int open = indexOf(bytes, (byte) '{', 0);
        if (open >= 0) {
            int close = indexOf(bytes, (byte) '}', open + 1);
            if (close > open + 1) {
                start = open + 1;
                end = close;
            }
        }
        int crc = 0;
        for (int i = start; i < end; i++) {
            crc ^= (bytes[i] & 0xff) << 8;
            for (int b = 0; b < 8; b++) {
                crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
                crc &= 0xffff;
            }
        }
        return crc % 16384;
    }

    private static int indexOf(byte[] bytes, byte b, int from) {
        for (int i = from; i < bytes.length; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }
}
