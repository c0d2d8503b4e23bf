package dev.warden.lock.etcd.internal;

import io.grpc.Attributes;
import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import io.grpc.StatusOr;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;

/**
 * gRPC's view of an etcd cluster: one address per member, in the order given, for the channel's
 * {@code pick_first} policy to try in turn (what jetcd's "ip" resolver did, without jetcd's client
 * jar). Host names are looked up again at every resolution, so a refresh after a failure sees a
 * moved member. The order lives in an {@link Order} the channel's owner can change: a member that
 * stopped answering goes last, and the channel, once idled, starts again from the new head.
 *
 * <p>gRPC finds resolvers by the target's scheme in its registry: this provider is registered there
 * once, under a scheme of Warden's own, and each channel hands it its member list as a name-resolver
 * argument ({@link #MEMBERS}), so channels to different clusters share the provider and nothing else.
 */
final class Members extends NameResolverProvider {

    static final String SCHEME = "warden-etcd";

    /** The members of a channel's cluster, unresolved ({@link InetSocketAddress#createUnresolved}), in their order. */
    static final NameResolver.Args.Key<Order> MEMBERS = NameResolver.Args.Key.create("warden-etcd-members");

    private static final String TARGET;

    static {
        NameResolverRegistry.getDefaultRegistry().register(new Members());
        TARGET = SCHEME + ":///members";
    }

    private Members() {
    }

    /** The channel target; using it registers the scheme first. */
    static String target() {
        return TARGET;
    }

    @Override
    protected boolean isAvailable() {
        return true;
    }

    @Override
    protected int priority() {
        return 5;
    }

    @Override
    public String getDefaultScheme() {
        return SCHEME;
    }

    @Override
    public NameResolver newNameResolver(URI target, NameResolver.Args args) {
        Order members = args.getArg(MEMBERS);
        if (!SCHEME.equals(target.getScheme()) || members == null) {
            return null;
        }
        return new Resolver(members);
    }

    private static String authority(InetSocketAddress member) {
        String host = member.getHostString();
        boolean bareIpv6 = host.indexOf(':') >= 0 && !host.startsWith("[");
        return (bareIpv6 ? "[" + host + "]" : host) + ":" + member.getPort();
    }

    /**
     * The order in which one channel tries its members. pick_first connects to the first member that
     * accepts, and after a lost connection starts again from the first, even when that member is
     * frozen: it accepts TCP connections, never completes HTTP/2's handshake, and gRPC sets no limit
     * on that. {@link #demote} moves such a member last. Thread-safe: the order is one immutable list
     * behind a volatile field, replaced under {@code this}.
     */
    static final class Order {

        /** The channel's authority, from the first member as given; never changes. */
        private final String authority;
        private volatile List<InetSocketAddress> members;

        Order(List<InetSocketAddress> members) {
            if (members.isEmpty()) {
                throw new IllegalArgumentException("no members");
            }
            this.members = List.copyOf(members);
            this.authority = Members.authority(members.get(0));
        }

        List<InetSocketAddress> current() {
            return members;
        }

        /**
         * Moves {@code stalled} last, keeping the others' order; with no address known (the channel
         * was still connecting), the first member, which pick_first tries first. Returns the member
         * moved. May look host names up: call it off gRPC's I/O threads.
         */
        synchronized InetSocketAddress demote(SocketAddress stalled) {
            List<InetSocketAddress> order = new ArrayList<>(members);
            int at = stalled instanceof InetSocketAddress a ? indexOf(order, a) : -1;
            InetSocketAddress moved = order.remove(Math.max(at, 0));
            order.add(moved);
            members = List.copyOf(order);
            return moved;
        }

        /**
         * The member with {@code address}'s port and host: as written, as an IP address, or (for a
         * member given by host name) one of the addresses the name resolves to now; -1 when none.
         */
        private static int indexOf(List<InetSocketAddress> order, InetSocketAddress address) {
            java.net.InetAddress ip = address.getAddress();
            for (int i = 0; i < order.size(); i++) {
                InetSocketAddress m = order.get(i);
                if (m.getPort() == address.getPort()
                        && (m.getHostString().equals(address.getHostString())
                        || (ip != null && m.getHostString().equals(ip.getHostAddress())))) {
                    return i;
                }
            }
            if (ip == null) {
                return -1;
            }
            for (int i = 0; i < order.size(); i++) {
                InetSocketAddress m = order.get(i);
                if (m.getPort() == address.getPort() && resolvesTo(m.getHostString(), ip)) {
                    return i;
                }
            }
            return -1;
        }

        private static boolean resolvesTo(String host, java.net.InetAddress ip) {
            try {
                for (java.net.InetAddress a : java.net.InetAddress.getAllByName(host)) {
                    if (a.equals(ip)) {
                        return true;
                    }
                }
            } catch (java.net.UnknownHostException e) {
                return false;
            }
            return false;
        }
    }

    /** Hands the member list to gRPC at start and again at every refresh; holds nothing to shut down. */
    private static final class Resolver extends NameResolver {

        private final Order order;
        private final String authority;
        private volatile Listener2 listener;

        Resolver(Order order) {
            this.order = order;
            this.authority = order.authority;
        }

        @Override
        public String getServiceAuthority() {
            return authority;
        }

        @Override
        public void start(Listener2 listener) {
            this.listener = listener;
            resolve();
        }

        @Override
        public void refresh() {
            resolve();
        }

        @Override
        public void shutdown() {
        }

        private void resolve() {
            List<EquivalentAddressGroup> groups = order.current().stream()
                    .map(m -> new EquivalentAddressGroup(new InetSocketAddress(m.getHostString(), m.getPort()),
                            Attributes.newBuilder().set(EquivalentAddressGroup.ATTR_AUTHORITY_OVERRIDE, authority(m)).build()))
                    .toList();
            listener.onResult(ResolutionResult.newBuilder().setAddressesOrError(StatusOr.fromValue(groups)).build());
        }
    }
}
