package dev.warden.lock.etcd.internal;

import io.grpc.Attributes;
import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import io.grpc.StatusOr;

import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;

/**
 * gRPC's view of an etcd cluster: one address per member, in the order given, for the channel's
 * {@code pick_first} policy to try in turn (what jetcd's "ip" resolver did, without jetcd's client
 * jar). Host names are looked up again at every resolution, so a refresh after a failure sees a
 * moved member.
 *
 * <p>gRPC finds resolvers by the target's scheme in its registry: this provider is registered there
 * once, under a scheme of Warden's own, and each channel hands it its member list as a name-resolver
 * argument ({@link #MEMBERS}), so channels to different clusters share the provider and nothing else.
 */
final class Members extends NameResolverProvider {

    static final String SCHEME = "warden-etcd";

    /** The members of a channel's cluster, unresolved ({@link InetSocketAddress#createUnresolved}). */
    static final NameResolver.Args.Key<List<InetSocketAddress>> MEMBERS = NameResolver.Args.Key.create("warden-etcd-members");

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
        List<InetSocketAddress> members = args.getArg(MEMBERS);
        if (!SCHEME.equals(target.getScheme()) || members == null || members.isEmpty()) {
            return null;
        }
        return new Resolver(List.copyOf(members));
    }

    private static String authority(InetSocketAddress member) {
        String host = member.getHostString();
        boolean bareIpv6 = host.indexOf(':') >= 0 && !host.startsWith("[");
        return (bareIpv6 ? "[" + host + "]" : host) + ":" + member.getPort();
    }

    /** Hands the member list to gRPC at start and again at every refresh; holds nothing to shut down. */
    private static final class Resolver extends NameResolver {

        private final List<InetSocketAddress> members;
        private volatile Listener2 listener;

        Resolver(List<InetSocketAddress> members) {
            this.members = members;
        }

        @Override
        public String getServiceAuthority() {
            return authority(members.get(0));
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
            List<EquivalentAddressGroup> groups = members.stream()
                    .map(m -> new EquivalentAddressGroup(new InetSocketAddress(m.getHostString(), m.getPort()),
                            Attributes.newBuilder().set(EquivalentAddressGroup.ATTR_AUTHORITY_OVERRIDE, authority(m)).build()))
                    .toList();
            listener.onResult(ResolutionResult.newBuilder().setAddressesOrError(StatusOr.fromValue(groups)).build());
        }
    }
}
