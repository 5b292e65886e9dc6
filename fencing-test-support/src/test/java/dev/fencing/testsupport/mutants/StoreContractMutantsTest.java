package dev.fencing.testsupport.mutants;

import dev.fencing.reactive.InMemoryReactiveFenceStore;
import dev.fencing.reactive.ReactiveFenceStore;
import dev.fencing.rule.FenceRule;
import dev.fencing.store.FenceStore;
import dev.fencing.testsupport.BoundedAdvanceContract;
import dev.fencing.testsupport.FenceCompactionContract;
import dev.fencing.testsupport.FenceStoreContract;
import dev.fencing.testsupport.ReactiveFenceStoreContract;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Mutation tests of the store contracts: a store with one pitfall each ({@link MiniStore.Flaw},
 * {@link ReactiveMutant.Flaw}), written against the SPI as a user writes one, must fail the contract a user runs
 * it against; the same store without the pitfall passes them all, so each failure is the pitfall's.
 */
class StoreContractMutantsTest {

    /** The flaw the contract classes below build their store with (the engine runs them on this thread). */
    static volatile MiniStore.Flaw flaw = MiniStore.Flaw.NONE;
    static volatile ReactiveMutant.Flaw reactiveFlaw;

    /** The store contract over a MiniStore with {@link #flaw}, extended as docs/testing.md shows. */
    static class Store extends FenceStoreContract {
        private final MiniStore.Data data = new MiniStore.Data();
        private final MiniStore store = new MiniStore(data, flaw, FenceRule.UNBOUNDED);

        @Override
        protected FenceStore store() {
            return store;
        }

        @Override
        protected FenceStore otherStore() {
            return new MiniStore(data, flaw, FenceRule.UNBOUNDED); // another process over the same data
        }
    }

    /** The bounded-advance contract over a MiniStore with {@link #flaw}. */
    static class Bounded extends BoundedAdvanceContract {
        private final MiniStore store = new MiniStore(new MiniStore.Data(), flaw, MAX_ADVANCE);

        @Override
        protected FenceStore store() {
            return store;
        }
    }

    /** The compaction contract over a MiniStore with {@link #flaw}. */
    static class Compaction extends FenceCompactionContract {
        @Override
        protected Subject newSubject() {
            MiniStore store = new MiniStore(flaw);
            return new Subject(store, store);
        }
    }

    /** The reactive contract over a {@link ReactiveMutant} with {@link #reactiveFlaw}, or the correct store. */
    static class Reactive extends ReactiveFenceStoreContract {
        private final InMemoryReactiveFenceStore data = new InMemoryReactiveFenceStore(); // the shared "table"
        private final ReactiveFenceStore store = reactiveFlaw == null ? data : new ReactiveMutant(reactiveFlaw, data);

        @Override
        protected ReactiveFenceStore store() {
            return store;
        }

        @Override
        protected ReactiveFenceStore otherStore() {
            return reactiveFlaw == null ? data : new ReactiveMutant(reactiveFlaw, data); // another process
        }
    }

    private static List<String> run(MiniStore.Flaw f, Class<?>... contracts) {
        flaw = f;
        try {
            List<String> failed = new ArrayList<>();
            for (Class<?> contract : contracts) {
                ContractRun.failures(contract).forEach(t -> failed.add(contract.getSimpleName() + "." + t));
            }
            System.out.println("[contract-mutants] " + f + " killed by " + failed);
            return failed;
        } finally {
            flaw = MiniStore.Flaw.NONE;
        }
    }

    @Test
    @Timeout(120)
    void theStoreWithoutAPitfallPassesEveryStoreContract() {
        assertThat(run(MiniStore.Flaw.NONE, Store.class, Bounded.class, Compaction.class)).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(value = MiniStore.Flaw.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    @Timeout(120)
    void everyPitfallFailsTheStoreContracts(MiniStore.Flaw f) {
        // the compaction contract (its pauses take seconds) only for a pitfall the other two let pass
        List<String> failed = run(f, Store.class, Bounded.class);
        assertThat(failed.isEmpty() ? run(f, Compaction.class) : failed).isNotEmpty();
    }

    @Test
    @Timeout(120)
    void theCorrectReactiveStorePassesTheReactiveContract() {
        reactiveFlaw = null;
        assertThat(ContractRun.failures(Reactive.class)).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(ReactiveMutant.Flaw.class)
    @Timeout(120)
    void everyReactivePitfallFailsTheReactiveContract(ReactiveMutant.Flaw f) {
        reactiveFlaw = f;
        try {
            List<String> failed = ContractRun.failures(Reactive.class);
            System.out.println("[contract-mutants] " + f + " killed by " + failed);
            assertThat(failed).isNotEmpty();
        } finally {
            reactiveFlaw = null;
        }
    }
}
