package dev.fencing.mode;

import dev.fencing.FencingConfigurationException;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The holder of the modes: per resource over the default, switched at runtime, refused where observing cannot work. */
class FenceModesTest {

    @Test
    void onceDeclaredOnlyDeclaredResourcesTakeAModeAndAFenceBuiltLaterDeclaresItsOwn() {
        FenceModes modes = new FenceModes(FenceMode.ENFORCE, Map.of("acounts", FenceMode.OBSERVE));
        modes.declareAlso("ignored"); // before the startup check: nothing is declared yet, every name is taken
        modes.set("orders", FenceMode.OBSERVE, "test");
        assertThat(modes.declare(java.util.Set.of("accounts", "orders"))).containsExactly("acounts");
        assertThatThrownBy(() -> modes.set("ledger", FenceMode.OBSERVE, "ops"))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("[accounts, orders]");
        assertThatThrownBy(() -> modes.set("ignored", FenceMode.OBSERVE, "ops"))
                .isInstanceOf(FencingConfigurationException.class);
        modes.declareAlso("ledger"); // a woven class that is not a bean, fenced for the first time
        modes.set("ledger", FenceMode.OBSERVE, "ops");
        assertThat(modes.observes("ledger")).isTrue();
        modes.declareAlso("ledger");
        assertThatThrownBy(() -> modes.set("ledgr", FenceMode.ENFORCE, "ops"))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("[accounts, ledger, orders]");
        assertThatThrownBy(() -> modes.set("ledger:7", FenceMode.ENFORCE, "ops"))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("one entity of resource 'ledger'");
        assertThat(FenceModes.entityOf("orders:eu:7", java.util.Set.of("orders", "orders:eu"))).isEqualTo("orders:eu");
        assertThat(FenceModes.entityOf("ordersx:7", java.util.Set.of("orders"))).isNull();
    }

    @Test
    void aResourceOwnModeWinsOverTheDefault() {
        FenceModes modes = new FenceModes(FenceMode.OBSERVE, Map.of("accounts", FenceMode.ENFORCE));

        assertThat(modes.observes("accounts")).isFalse();
        assertThat(modes.observes("orders")).isTrue();
        assertThat(modes.mode("orders")).isEqualTo(FenceMode.OBSERVE);
    }

    @Test
    void aSwitchIsSeenByTheNextQuestionAndTheDefaultCanBeSwitchedAlone() {
        FenceModes modes = FenceModes.enforcing();
        assertThat(modes.observes("accounts")).isFalse();

        modes.set("accounts", FenceMode.OBSERVE, "test");
        assertThat(modes.observes("accounts")).isTrue();
        assertThat(modes.observes("orders")).isFalse();

        modes.set(null, FenceMode.OBSERVE, "test");
        modes.set("accounts", FenceMode.ENFORCE, "test");
        assertThat(modes.observes("accounts")).isFalse();
        assertThat(modes.observes("orders")).isTrue();
        assertThat(modes.resources()).containsExactly(Map.entry("accounts", FenceMode.ENFORCE));
    }

    @Test
    void observingWhereARefusalIsRecordedFailsAtValidationAndAtRuntimeAndChangesNothing() {
        FenceModes modes = new FenceModes(FenceMode.ENFORCE, Map.of("prices", FenceMode.OBSERVE));
        modes.refuseObserve("prices", "a reactive point cannot observe");

        assertThatThrownBy(modes::validate).isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("resource 'prices'").hasMessageContaining("a reactive point cannot observe");

        FenceModes everywhere = FenceModes.enforcing();
        everywhere.refuseObserve(null, "the store judges at commit");
        everywhere.validate();
        assertThatThrownBy(() -> everywhere.set("accounts", FenceMode.OBSERVE, "ops"))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("resource 'accounts'").hasMessageContaining("asked by ops")
                .hasMessageContaining("the store judges at commit");
        assertThat(everywhere.observes("accounts")).isFalse();
    }

    @Test
    void anUnknownModeNamesWhereItWasWritten() {
        assertThat(FenceMode.parse(" Observe ", "x")).isEqualTo(FenceMode.OBSERVE);
        assertThatThrownBy(() -> FenceMode.parse("watch", "fencing.modes.accounts"))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("'watch'").hasMessageContaining("fencing.modes.accounts");
        assertThatThrownBy(() -> new FenceModes(FenceMode.ENFORCE, Map.of(" ", FenceMode.OBSERVE)))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("blank resource");
    }
}
