package dev.fencing.boot.autoconfigure;

import dev.fencing.issuer.IssuerBase;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.core.env.Environment;

import java.util.Map;
import java.util.function.Supplier;

/**
 * The issuer offsets stored so far (migration name to base): from the application's {@link IssuerBase} bean, or else
 * the {@code fencing.issuer.offset.table} on its data source when fencing-jdbc is present. A read only: a missing table
 * counts as none stored. For the startup checks' messages ({@link #StoredOffsets(BeanFactory, Environment)}) a table
 * that cannot be read counts as none too; for the admin operations, which refuse below a stored base
 * ({@link #forAdmin}), the failure is thrown, so the operation fails rather than run unbounded.
 */
final class StoredOffsets implements Supplier<Map<String, Long>> {

    private static final Log log = LogFactory.getLog(StoredOffsets.class);

    private final BeanFactory beanFactory;
    private final Environment environment;

    private final boolean strict;

    StoredOffsets(BeanFactory beanFactory, Environment environment) {
        this(beanFactory, environment, false);
    }

    private StoredOffsets(BeanFactory beanFactory, Environment environment, boolean strict) {
        this.beanFactory = beanFactory;
        this.environment = environment;
        this.strict = strict;
    }

    /** The stored offsets for a reset or floor raise: a failure to read them (not a missing table) is thrown. */
    static StoredOffsets forAdmin(BeanFactory beanFactory, Environment environment) {
        return new StoredOffsets(beanFactory, environment, true);
    }

    @Override
    public Map<String, Long> get() {
        try {
            IssuerBase own = beanFactory.getBeanProvider(IssuerBase.class).getIfUnique();
            if (own != null) {
                return own.storedBases();
            }
            if (!JdbcOffsetParts.PRESENT) {
                return Map.of();
            }
            String table = IssuerOffsetPostProcessor.properties(environment).getTable();
            java.util.Optional<Map<String, Long>> stored = JdbcOffsetParts.storedBasesIfPresent(beanFactory, table);
            if (stored.isEmpty() && strict) {
                // what the command line prints as a note: a base stored under another name bounds nothing here
                log.warn("No issuer base table '" + table + "' in this application's database, so no issuer "
                        + "migration bounds this reset or floor raise. If another instance stores its migration's "
                        + "base in a table of another name (fencing.issuer.offset.table), set that property here too: "
                        + "a value below that base would let the old issuer's tokens write among the new one's");
            }
            return stored.orElse(Map.of());
        } catch (RuntimeException e) {
            if (strict) {
                throw e;
            }
            log.debug("Could not read the stored issuer offsets for a startup message: " + e);
            return Map.of();
        }
    }
}
