package dev.warden.lock.etcd.internal;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The order in which a channel tries etcd members, and how a silent member is moved last. */
class MembersOrderTest {

    private static final InetSocketAddress A = InetSocketAddress.createUnresolved("127.0.0.1", 2379);
    private static final InetSocketAddress B = InetSocketAddress.createUnresolved("127.0.0.1", 2479);
    private static final InetSocketAddress C = InetSocketAddress.createUnresolved("etcd-c.example", 2379);

    @Test
    @DisplayName("the member a call was sent to goes last; the others keep their order")
    void knownMemberGoesLast() {
        Members.Order order = new Members.Order(List.of(A, B, C));
        assertThat(order.demote(new InetSocketAddress("127.0.0.1", 2479))).isEqualTo(B);
        assertThat(order.current()).containsExactly(A, C, B);
    }

    @Test
    @DisplayName("with no address known, the first member (the one pick_first connects to) goes last")
    void unknownMemberMovesTheHead() {
        Members.Order order = new Members.Order(List.of(A, B, C));
        assertThat(order.demote(null)).isEqualTo(A);
        assertThat(order.demote(null)).isEqualTo(B);
        assertThat(order.current()).containsExactly(C, A, B);
    }

    @Test
    @DisplayName("an address matching no member by host and port moves the head, never a member on the same port")
    void portAloneDoesNotMatch() {
        Members.Order order = new Members.Order(List.of(C, A, B));
        assertThat(order.demote(InetSocketAddress.createUnresolved("10.0.0.9", 2379))).isEqualTo(C);
        assertThat(order.demote(new InetSocketAddress("127.0.0.1", 2379))).isEqualTo(A);
        assertThat(order.current()).containsExactly(B, C, A);
    }

    @Test
    @DisplayName("a member given by host name matches the IP address the call went to")
    void hostNameMember() {
        InetSocketAddress byName = InetSocketAddress.createUnresolved("localhost", 2579);
        Members.Order order = new Members.Order(List.of(byName, A, B));
        assertThat(order.demote(new InetSocketAddress("127.0.0.1", 2579))).isEqualTo(byName);
        assertThat(order.current()).containsExactly(A, B, byName);
    }
}
