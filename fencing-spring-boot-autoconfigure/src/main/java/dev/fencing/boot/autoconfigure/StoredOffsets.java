package dev.fencing.boot.autoconfigure;

import dev.fencing.issuer.IssuerBase;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.core.env.Environment;

import java.util.Map;
import java.util.function.Supplier;

/**
 * The issuer offsets stored so far (migration name to base), read for the startup checks' messages: from the
 * application's {@link IssuerBase} bean, or else the {@code fencing.issuer.offset.table} on its data source when
 * fencing-jdbc is present. A read only: a missing table, or one that cannot be read, counts as none stored.
 */
final class StoredOffsets implements Supplier<Map<String, Long>> {

    private static final Log log = LogFactory.getLog(StoredOffsets.class);

    private final BeanFactory beanFactory;
    private final Environment environment;

    StoredOffsets(BeanFactory beanFactory, Environment environment) {
        this.beanFactory = beanFactory;
        this.environment = environment;
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
            return JdbcOffsetParts.storedBases(beanFactory,
                    IssuerOffsetPostProcessor.properties(environment).getTable());
        } catch (RuntimeException e) {
            log.debug("Could not read the stored issuer offsets for a startup message: " + e);
            return Map.of();
        }
    }
}
