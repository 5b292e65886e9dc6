package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.InMemoryIssuerBase;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.IssuerBase;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.store.FenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * fencing.store.jdbc.max-advance where it would bound nothing or refuse real holders (a new user's trial): it was
 * ignored by the in-memory store, refused every rarely written resource's holders beside ZooKeeper, and locked out
 * every resource after an issuer offset (whose base was stored for good). Each now fails startup, or applies.
 */
class MaxAdvanceCheckTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                    FencingIssuerOffsetAutoConfiguration.class))
            .withPropertyValues("fencing.store.type=in-memory", "fencing.store.jdbc.max-advance=10",
                    "fencing.store.in-memory.single-instance=true"); // the one-sequence issuers stand for ZooKeeper

    @Test
    void theInMemoryStoreAppliesTheBound() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            FenceStore store = context.getBean(FenceStore.class);
            store.fence("ledger", new FencingToken("ledger", 1, "a"), () -> null);
            assertThatThrownBy(() -> store.fence("ledger", new FencingToken("ledger", 100, "forged"), () -> null))
                    .isInstanceOf(TokenRejectedException.class);
            store.fence("ledger", new FencingToken("ledger", 11, "a"), () -> null);
        });
    }

    @Test
    void besideAOneSequenceIssuerStartupFails() {
        runner.withBean(TokenIssuer.class, () -> new IssuerCounterCheckTest.OneSequence(0)).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("fencing.store.jdbc.max-advance=10")
                    .hasMessageContaining("issues one sequence for every resource");
        });
        runner.withBean(TokenIssuer.class, InMemoryTokenIssuer::new).run(context -> assertThat(context).hasNotFailed());
    }

    /** Beside a one-sequence issuer with an offset, the base was stored before the bound failed startup. */
    @Test
    void besideAnOffsetOneSequenceIssuerNoBaseIsStored() {
        InMemoryIssuerBase bases = new InMemoryIssuerBase();
        runner.withBean(TokenIssuer.class, () -> new IssuerCounterCheckTest.OneSequence(0))
                .withBean(IssuerBase.class, () -> bases)
                .withPropertyValues("fencing.store.jdbc.max-advance=100000", "fencing.issuer.offset.base=100")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).hasStackTraceContaining("issues one sequence");
                });
        assertThat(bases.stored("default")).isEmpty();
    }

    @Test
    void notAboveAnIssuerOffsetsBaseStartupFailsAndNoBaseIsStored() {
        InMemoryIssuerBase bases = new InMemoryIssuerBase();
        runner.withBean(TokenIssuer.class, InMemoryTokenIssuer::new).withBean(IssuerBase.class, () -> bases)
                .withPropertyValues("fencing.issuer.offset.base=1000").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .hasMessageContaining("fencing.store.jdbc.max-advance=10 is not above the issuer offset "
                                    + "fencing.issuer.offset.base=1000");
                });
        assertThat(bases.stored("default")).isEmpty();
        runner.withBean(TokenIssuer.class, InMemoryTokenIssuer::new).withBean(IssuerBase.class, () -> bases)
                .withPropertyValues("fencing.issuer.offset.base=5").run(context -> assertThat(context).hasNotFailed());
    }
}
