package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.store.InMemoryFenceStore;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * The startup check of {@code fencing.store.jdbc.max-advance} against what issues the tokens and what applies the
 * bound (see {@link FencingAutoConfiguration#fencingMaxAdvanceCheck}).
 */
final class MaxAdvanceCheck {

    static final String PROPERTY = "fencing.store.jdbc.max-advance";
    private static final String R2DBC_STORE = "dev.fencing.r2dbc.R2dbcFenceStore";
    private static final String JDBC_STORE = "dev.fencing.jdbc.JdbcFenceStore";

    private MaxAdvanceCheck() {
    }

    static void check(ConfigurableListableBeanFactory beans, Environment environment) {
        check(beans, environment, true);
    }

    /**
     * The refusals, and with {@code warn} the warning too: the issuer offset runs the refusals before it stores a
     * base, and the startup check runs them again with the warning, said once.
     */
    static void check(ConfigurableListableBeanFactory beans, Environment environment, boolean warn) {
        Long maxAdvance = Binder.get(environment).bind(PROPERTY, Long.class).orElse(null);
        if (maxAdvance == null) {
            return;
        }
        boolean blocking = starters(beans, "fenceStore", JDBC_STORE) || StarterBeans.madeByStarter(beans, "fenceStore")
                && beans.getBean("fenceStore") instanceof InMemoryFenceStore;
        boolean reactive = starters(beans, "reactiveFenceStore", R2DBC_STORE);
        if (reactive && !blocking) {
            throw new FencingConfigurationException(PROPERTY + "=" + maxAdvance + " is set, but the application's "
                    + "fence store is the R2DBC store, which has no bound on one advance, and no JDBC store applies "
                    + "it: remove the property (nothing would be bounded)");
        }
        if (reactive && warn) {
            LogFactory.getLog(MaxAdvanceCheck.class).warn(PROPERTY + "=" + maxAdvance + " bounds the blocking "
                    + "@Fenced methods' checks (the JDBC store); the reactive ones, checked by the R2DBC store, have "
                    + "no such bound");
        }
        TokenIssuer issuer = beans.getBeanProvider(TokenIssuer.class).getIfUnique();
        if (blocking && issuer instanceof IssuedTokens tokens && tokens.oneSequence()) {
            throw new FencingConfigurationException(PROPERTY + "=" + maxAdvance + " bounds how far one token may "
                    + "move a resource's max_seen, but the TokenIssuer bean (" + issuer.getClass().getName() + ") "
                    + "issues one sequence for every resource (ZooKeeper's zxid, etcd's revision): a resource written "
                    + "rarely sees its next token move by every write elsewhere (ZooKeeper's by 2^32 at a leader "
                    + "election), and its real holders would be refused as out of range. Remove the property; the "
                    + "bound suits issuers that count per resource (the JDBC lease)");
        }
        requireAboveOffset(environment);
    }

    /**
     * Fails when an issuer offset's base is not below {@code fencing.store.jdbc.max-advance}; also called by the
     * offset itself before it stores a base, so a refused one is never stored.
     */
    static void requireAboveOffset(Environment environment) {
        Long maxAdvance = Binder.get(environment).bind(PROPERTY, Long.class).orElse(null);
        Long base = Binder.get(environment).bind(IssuerOffsetPostProcessor.PREFIX + ".base", Long.class)
                .orElse(null);
        if (maxAdvance != null && base != null && base >= maxAdvance) {
            throw new FencingConfigurationException(PROPERTY + "=" + maxAdvance + " is not above the issuer offset "
                    + IssuerOffsetPostProcessor.PREFIX + ".base=" + base + ": the offset moves every resource's next "
                    + "token about " + base + " above its max_seen, and each one not yet written by the new issuer "
                    + "would refuse it as out of range (for as long as the offset is configured). Raise " + PROPERTY
                    + " above the base, or remove it");
        }
    }

    /** Whether bean {@code name} is the starter's, of the class named {@code type}. */
    private static boolean starters(ConfigurableListableBeanFactory beans, String name, String type) {
        if (!StarterBeans.madeByStarter(beans, name)) {
            return false;
        }
        Class<?> found = beans.getType(name);
        return found != null && found.getName().equals(type);
    }
}
