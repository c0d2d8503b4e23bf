package dev.warden.lock.redis.internal;

import io.lettuce.core.internal.HostAndPort;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code address-map} option: addresses Redis announces (a Sentinel's primary, a Cluster's
 * nodes, MOVED redirections) mapped to the addresses this client reaches them at, for deployments
 * behind NAT, port forwarding or a proxy: {@code announced-host:port=reachable-host:port,...}.
 * Addresses not listed are used as announced.
 */
public record AddressMap(Map<HostAndPort, HostAndPort> entries) {

    /** The option's name, under {@code warden.lock.redis.}. */
    public static final String OPTION = "address-map";

    /** What is wrong with the option's value; empty when it is unset or fine. */
    public static List<String> problems(String text) {
        List<String> problems = new ArrayList<>();
        parse(text, problems);
        return problems;
    }

    public AddressMap {
        entries = Map.copyOf(entries);
    }

    static AddressMap none() {
        return new AddressMap(Map.of());
    }

    boolean isEmpty() {
        return entries.isEmpty();
    }

    /** Where to connect for an announced address. */
    HostAndPort apply(HostAndPort announced) {
        HostAndPort mapped = entries.get(announced);
        return mapped == null ? announced : mapped;
    }

    /** Parses the option; {@code problems} gets what is wrong with it. */
    static AddressMap parse(String text, List<String> problems) {
        if (text == null || text.isBlank()) {
            return none();
        }
        Map<HostAndPort, HostAndPort> entries = new LinkedHashMap<>();
        List<String> bad = new ArrayList<>();
        for (String pair : text.split(",")) {
            String[] sides = pair.trim().split("=");
            HostAndPort from = sides.length == 2 ? hostAndPort(sides[0]) : null;
            HostAndPort to = sides.length == 2 ? hostAndPort(sides[1]) : null;
            if (from == null || to == null) {
                bad.add(pair.trim());
            } else {
                entries.put(from, to);
            }
        }
        if (!bad.isEmpty()) {
            problems.add("warden.lock.redis." + OPTION + ": " + bad + " not of the form announced-host:port=reachable-host:port");
        }
        return new AddressMap(entries);
    }

    private static HostAndPort hostAndPort(String text) {
        String t = text.trim();
        int colon = t.lastIndexOf(':');
        if (colon <= 0) {
            return null;
        }
        try {
            int port = Integer.parseInt(t.substring(colon + 1));
            String host = t.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            return port < 1 || port > 65535 ? null : HostAndPort.of(host, port);
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
