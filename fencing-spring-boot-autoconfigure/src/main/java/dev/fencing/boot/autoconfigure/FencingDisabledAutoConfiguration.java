package dev.fencing.boot.autoconfigure;

import dev.fencing.annotation.Fenced;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;

/**
 * With {@code fencing.enabled=false}: nothing but a warning at startup, since every {@code @Fenced} method then runs
 * unchecked, and a property left over in one profile must not switch the protection off unnoticed.
 */
@AutoConfiguration
@ConditionalOnClass(Fenced.class)
@ConditionalOnBooleanProperty(name = "fencing.enabled", havingValue = false)
public class FencingDisabledAutoConfiguration {

    static final String WARNING = "fencing.enabled=false: every @Fenced method runs unchecked (no token is checked "
            + "and no lock is taken); remove the property to turn fencing back on";

    private static final Log log = LogFactory.getLog(FencingDisabledAutoConfiguration.class);

    FencingDisabledAutoConfiguration() {
        log.warn(WARNING);
    }
}
