package dev.fencing.store;

import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.Verdict;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What only the in-memory store does (its floor, its per-resource lock); the behaviour every store shares is checked by
 * {@code FenceStoreContract}, which fencing-test-support runs against this store
 * ({@code InMemoryFenceStoreContractTest}).
 */
class InMemoryFenceStoreTest {

    private final InMemoryFenceStore store = new InMemoryFenceStore();

    @Test
    void rememberedMaxSeenIsVisible() throws Throwable {
        assertThat(store.maxSeen("r")).isEmpty();
        store.fence("r", new FencingToken("r", 12, "a"), () -> null);
        assertThat(store.maxSeen("r")).hasValue(12);
        assertThat(store.size()).isEqualTo(1);
    }

    @Test
    void floorRejectsTokensUpToItAndNeverLowers() throws Throwable {
        store.raiseFloor("r", 32);
        store.raiseFloor("r", 10);
        assertThat(store.maxSeen("r")).hasValue(32);
        assertThatThrownBy(() -> store.fence("r", new FencingToken("r", 32, "a"), () -> null))
                .isInstanceOfSatisfying(DuplicateTokenException.class,
                        e -> assertThat(e.verdict()).isEqualTo(Verdict.REJECT_DUPLICATE));
        assertThat(store.fence("r", new FencingToken("r", 33, "a"), () -> "ok")).isEqualTo("ok");
        assertThatThrownBy(() -> store.raiseFloor("r", 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aFloorAtTheCurrentMaxSeenRefusesItsHolderToo() throws Throwable {
        // raiseFloor(r, the old lock service's last token): that token's holder is shut out as well (a review found
        // the holder kept when max_seen already equalled the floor, and its token accepted again)
        store.fence("r", new FencingToken("r", 34, "old-service-holder"), () -> null);
        store.raiseFloor("r", 34);
        assertThat(store.maxSeen("r")).hasValue(34);
        assertThatThrownBy(() -> store.fence("r", new FencingToken("r", 34, "old-service-holder"), () -> null))
                .isInstanceOf(DuplicateTokenException.class);
        assertThat(store.fence("r", new FencingToken("r", 35, "new"), () -> "ok")).isEqualTo("ok");
    }

    @Test
    void aWriteCheckedEarlierIsNotAppliedAfterANewerAcceptedOne() throws Exception {
        // 33 is checked and its write is in progress; 34 arrives meanwhile: 34 waits until 33's write is done,
        // so 33's write can never land after 34's
        FencingToken t33 = new FencingToken("r", 33, "a");
        FencingToken t34 = new FencingToken("r", 34, "b");
        CountDownLatch inside33 = new CountDownLatch(1);
        CountDownLatch finish33 = new CountDownLatch(1);
        StringBuffer order = new StringBuffer();
        Thread zombie = new Thread(() -> {
            try {
                store.fence("r", t33, () -> {
                    inside33.countDown();
                    finish33.await();
                    order.append("33;");
                    return null;
                });
            } catch (Throwable e) {
                throw new AssertionError(e);
            }
        });
        zombie.start();
        assertThat(inside33.await(10, TimeUnit.SECONDS)).isTrue();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread newer = new Thread(() -> {
            try {
                store.fence("r", t34, () -> order.append("34;"));
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        newer.start();
        newer.join(200);
        assertThat(order.toString()).isEmpty();
        finish33.countDown();
        zombie.join(10_000);
        newer.join(10_000);
        assertThat(failure.get()).isNull();
        assertThat(order.toString()).isEqualTo("33;34;");
    }

    @Test
    void nestedFenceOnTheSameResourceDoesNotDeadlock() throws Throwable {
        FencingToken t = new FencingToken("r", 5, "a");
        String result = store.fence("r", t, () -> store.fence("r", t, () -> "inner"));
        assertThat(result).isEqualTo("inner");
    }
}
