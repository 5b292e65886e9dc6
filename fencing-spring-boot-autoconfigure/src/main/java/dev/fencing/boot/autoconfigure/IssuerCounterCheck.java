package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.recovery.FenceInventory;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.signing.SigningTokenIssuer;
import dev.fencing.store.FenceStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;

import java.util.OptionalLong;

/**
 * Once every singleton exists: fails startup when the application's one-sequence issuer (ZooKeeper, etcd:
 * {@link IssuedTokens#oneSequence()}) counts below the fence store's highest max_seen, since every write to that
 * resource would then be refused as stale (a move to a new issuer without {@code fencing.issuer.offset.base}).
 * Issuers with a counter per resource, and stores without a listing, are not checked; a read that fails is logged.
 */
final class IssuerCounterCheck implements SmartInitializingSingleton {

    static final String PROPERTY = "fencing.issuer.check-fence-store";

    /** The resource the counter is read for: a one-sequence issuer answers the same for every resource. */
    static final String PROBE_RESOURCE = "fencing-startup-check";

    private static final Log log = LogFactory.getLog(IssuerCounterCheck.class);

    private final ObjectProvider<TokenIssuer> issuers;
    private final ObjectProvider<FenceStore> stores;

    IssuerCounterCheck(ObjectProvider<TokenIssuer> issuers, ObjectProvider<FenceStore> stores) {
        this.issuers = issuers;
        this.stores = stores;
    }

    @Override
    public void afterSingletonsInstantiated() {
        check(issuers.getIfUnique(), FenceStoreInventory.of(stores.getIfUnique()));
    }

    /**
     * Compares the counter of {@code issuer} with the highest max_seen of {@code fences}.
     *
     * @throws FencingConfigurationException when the issuer is a one-sequence issuer whose counter is below it
     */
    static void check(TokenIssuer issuer, FenceInventory fences) {
        IssuedTokens tokens = oneSequence(issuer);
        if (tokens == null || fences == null) {
            return;
        }
        long highest;
        long counter;
        try {
            OptionalLong maxSeen = fences.highestMaxSeen();
            if (maxSeen.isEmpty()) {
                return;
            }
            highest = maxSeen.getAsLong();
            counter = tokens.highestIssued(PROBE_RESOURCE);
        } catch (RuntimeException e) {
            log.warn("Could not compare the token issuer's counter with the fence store's highest max_seen at "
                    + "startup (" + PROPERTY + "), the check is skipped: " + e);
            return;
        }
        if (counter < highest) {
            throw new FencingConfigurationException(message(issuer, counter, highest));
        }
    }

    /** The issuer's {@link IssuedTokens} (under a signing issuer, the signed one's) when it counts one sequence. */
    static IssuedTokens oneSequence(TokenIssuer issuer) {
        TokenIssuer counted = issuer instanceof SigningTokenIssuer signing ? signing.delegate() : issuer;
        return counted instanceof IssuedTokens tokens && tokens.oneSequence() ? tokens : null;
    }

    private static String message(TokenIssuer issuer, long counter, long highest) {
        TokenIssuer counted = issuer instanceof SigningTokenIssuer signing ? signing.delegate() : issuer;
        OffsetTokenIssuer offset = counted instanceof OffsetTokenIssuer shifted ? shifted : null;
        String name = (offset != null ? offset.delegate() : counted).getClass().getSimpleName();
        String fix = offset == null
                ? "This is what a move to a new issuer (a JDBC lease table to ZooKeeper, an old ensemble to a new one) "
                + "without fencing.issuer.offset.base looks like: set fencing.issuer.offset.base above " + highest
                + ", with headroom"
                : "The offset base " + offset.base() + " is too low for this fence store: choose one above "
                + highest + ", with headroom, under a new fencing.issuer.offset.name (a stored base never changes)";
        return "The token issuer's counter is " + counter + (offset != null ? " (with fencing.issuer.offset.base="
                + offset.base() + ")" : "") + " (" + name + ": one sequence for every resource), below the fence "
                + "store's highest max_seen " + highest + ": every write to the resource whose max_seen is " + highest
                + " would be refused as stale, until the issuer counts past it. " + fix + " (see docs/issuers.md, "
                + "\"Moving to another issuer\"). If the fence table is shared with another application whose issuer "
                + "counts higher, set " + PROPERTY + "=false";
    }
}
