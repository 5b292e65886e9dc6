package dev.fencing.store;

import dev.fencing.retention.IssuerFloors;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A store bounded by maxResources folds the least recently advanced free slots for a new resource. A slot whose holder
 * checked its token a second time (a fenced method calling another, or two fenced writes under one lease) is marked
 * touched; the bound's folding skipped touched slots without turning the mark into a time, so such a slot was never
 * folded by the bound: a store of such slots refused every new resource though no thread held anything. Now the
 * bound folds slots in use only when the others are not enough, least recently advanced first.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class TouchedSlotFoldingTest {

    @Test
    void slotsWhoseHolderWroteTwiceAreStillFoldedByTheBound() throws Throwable {
        InMemoryFenceStore store = InMemoryFenceStore.builder().maxResources(2, IssuerFloors.ONE_SEQUENCE).build();
        FencingToken a = new FencingToken("fam:a", 1, "h1");
        FencingToken b = new FencingToken("fam:b", 2, "h2");
        store.fence("fam:a", a, () -> null);
        store.fence("fam:a", a, () -> null); // the same lease writes again: touched
        store.fence("fam:b", b, () -> null);
        store.fence("fam:b", b, () -> null);
        // nothing is held now: the bound should fold fam:a (the least recently advanced) for fam:c
        assertThatCode(() -> store.fence("fam:c", new FencingToken("fam:c", 3, "h3"), () -> null))
                .doesNotThrowAnyException();
        assertThat(store.size()).isEqualTo(2);
        // only as many in-use slots as the bound needs, the least recently advanced first: fam:b's holder goes on
        assertThatCode(() -> store.fence("fam:b", b, () -> null)).doesNotThrowAnyException();
        assertThatThrownBy(() -> store.fence("fam:a", a, () -> null)).as("folded: judged by its family's floor")
                .isInstanceOf(TokenRejectedException.class);
    }
}
