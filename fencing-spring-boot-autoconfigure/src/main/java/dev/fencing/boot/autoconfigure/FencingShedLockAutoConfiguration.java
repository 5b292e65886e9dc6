package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.shedlock.FencingLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * With fencing-shedlock on the class path, startup fails while a ShedLock {@link LockProvider} bean is not a
 * {@link FencingLockProvider}: {@code @EnableSchedulerLockFencing} was forgotten, so no job run takes a token and
 * each fenced write of a job is refused as missing, with a message that names neither ShedLock nor the annotation.
 */
@AutoConfiguration(after = FencingAutoConfiguration.class)
@ConditionalOnClass({FencingLockProvider.class, LockProvider.class})
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
public class FencingShedLockAutoConfiguration {

    @Bean
    static UnfencedLockProviderCheck fencingUnfencedLockProviderCheck() {
        return new UnfencedLockProviderCheck();
    }

    /** Fails startup naming each ShedLock provider bean that is not fenced. */
    static final class UnfencedLockProviderCheck implements SmartInitializingSingleton, BeanFactoryAware {

        private ListableBeanFactory beanFactory;

        @Override
        public void setBeanFactory(BeanFactory beanFactory) {
            this.beanFactory = (ListableBeanFactory) beanFactory;
        }

        @Override
        public void afterSingletonsInstantiated() {
            Set<String> unfenced = new TreeSet<>();
            for (Map.Entry<String, LockProvider> provider
                    : beanFactory.getBeansOfType(LockProvider.class, false, false).entrySet()) {
                if (!(provider.getValue() instanceof FencingLockProvider)) {
                    unfenced.add(provider.getKey());
                }
            }
            if (!unfenced.isEmpty()) {
                throw new FencingConfigurationException("fencing-shedlock is on the class path, but the ShedLock "
                        + "LockProvider bean(s) " + unfenced + " are not fenced: no job run takes a fencing token, so "
                        + "a run that overran lockAtMostFor is not told apart from the next, and each @Fenced write of "
                        + "a job is refused as missing. Add @EnableSchedulerLockFencing to a @Configuration class (it "
                        + "wraps every LockProvider bean), or return a FencingLockProvider from the bean method; or "
                        + "remove fencing-shedlock");
            }
        }
    }
}
