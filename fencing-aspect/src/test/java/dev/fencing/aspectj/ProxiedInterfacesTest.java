package dev.fencing.aspectj;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import dev.fencing.spring.EnableFencing;
import org.junit.jupiter.api.Test;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Beans whose fenced methods live only on an interface implemented by a JDK proxy, made by a {@code FactoryBean}:
 * the shape of every Spring Data repository. They are checked at startup, and messages name the interface method,
 * never the proxy class.
 */
class ProxiedInterfacesTest {

    /** A repository interface with no implementing class: a JDK proxy answers its calls. */
    interface AccountRepository {
        @Fenced(resource = "accounts", key = "#accountId")
        void withdraw(long accountId, long amount);
    }

    interface TypoRepository {
        @Fenced(resource = "accounts", key = "#acountId")
        void withdraw(long accountId, long amount);
    }

    /** Records calls, like a repository's query would run them. */
    static final List<String> CALLS = new CopyOnWriteArrayList<>();

    /** Like Spring Data's repository factory bean: a JDK proxy of the interface (a plain one, or Spring's own). */
    static final class RepositoryFactoryBean<T> implements FactoryBean<T> {
        private final Class<T> repositoryInterface;
        private final boolean springProxy;

        RepositoryFactoryBean(Class<T> repositoryInterface, boolean springProxy) {
            this.repositoryInterface = repositoryInterface;
            this.springProxy = springProxy;
        }

        @Override
        public T getObject() {
            Object proxy;
            if (springProxy) {
                ProxyFactory factory = new ProxyFactory();
                factory.addInterface(repositoryInterface);
                factory.addAdvice((org.aopalliance.intercept.MethodInterceptor) invocation -> {
                    CALLS.add(invocation.getMethod().getName());
                    return null;
                });
                proxy = factory.getProxy(repositoryInterface.getClassLoader());
            } else {
                proxy = Proxy.newProxyInstance(repositoryInterface.getClassLoader(),
                        new Class<?>[] {repositoryInterface},
                        (self, method, args) -> {
                            if (method.getDeclaringClass() == Object.class) {
                                return method.getName().equals("equals") ? self == args[0]
                                        : method.getName().equals("hashCode") ? System.identityHashCode(self)
                                        : "repository proxy";
                            }
                            CALLS.add(method.getName());
                            return null;
                        });
            }
            return repositoryInterface.cast(proxy);
        }

        @Override
        public Class<?> getObjectType() {
            return repositoryInterface;
        }
    }

    /** The store and the repository; each configuration below adds its own {@code @EnableFencing}. */
    static class RepositoryBeans {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        RepositoryFactoryBean<AccountRepository> accountRepository() {
            return new RepositoryFactoryBean<>(AccountRepository.class, false);
        }
    }

    @Configuration
    @EnableFencing
    static class Repositories extends RepositoryBeans {
    }

    @Configuration
    @EnableFencing(proxyTargetClass = true)
    static class ClassProxiedRepositories extends RepositoryBeans {
    }

    @Configuration
    @EnableFencing
    static class SpringProxiedRepositories extends RepositoryBeans {
        @Override
        @Bean
        RepositoryFactoryBean<AccountRepository> accountRepository() {
            return new RepositoryFactoryBean<>(AccountRepository.class, true);
        }
    }

    static class TypoBeans {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        RepositoryFactoryBean<TypoRepository> typoRepository() {
            return new RepositoryFactoryBean<>(TypoRepository.class, true);
        }
    }

    @Configuration
    @EnableFencing
    static class Typo extends TypoBeans {
    }

    @Configuration
    @EnableFencing
    static class LazyTypo extends TypoBeans {
        @Override
        @Bean
        @org.springframework.context.annotation.Lazy
        RepositoryFactoryBean<TypoRepository> typoRepository() {
            return super.typoRepository();
        }
    }

    /** A bean method returning a plain JDK proxy (no FactoryBean): already created when startup checks run. */
    @Configuration
    @EnableFencing
    static class TypoProxyBean {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        TypoRepository typoRepository() {
            return new RepositoryFactoryBean<>(TypoRepository.class, false).getObject();
        }
    }

    @Configuration
    @EnableFencing(mode = AdviceMode.ASPECTJ)
    static class WovenRepositories extends RepositoryBeans {
    }

    @Test
    void aFactoryBeanProductWithABadKeyFailsStartupNamingTheInterfaceMethod() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(Typo.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("TypoRepository.withdraw(long, long)")
                .hasMessageContaining("#acountId is not a parameter")
                .hasMessageNotContaining("$Proxy");
    }

    @Test
    void aLazyFactoryBeanProductIsCheckedByItsType() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(LazyTypo.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("TypoRepository.withdraw(long, long)");
    }

    @Test
    void aJdkProxyBeanWithABadKeyFailsStartupNamingTheInterfaceMethod() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(TypoProxyBean.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("TypoRepository.withdraw(long, long)")
                .hasMessageContaining("#acountId is not a parameter")
                .hasMessageNotContaining("$Proxy");
    }

    @Test
    void errorsOfAProxyOfAPlainJdkProxyNameTheInterfaceMethod() {
        assertNamesTheInterface(Repositories.class);
    }

    @Test
    void errorsOfAProxyOfASpringJdkProxyNameTheInterfaceMethod() {
        assertNamesTheInterface(SpringProxiedRepositories.class);
    }

    @Test
    void errorsNameTheInterfaceMethodWithProxyTargetClassToo() {
        assertNamesTheInterface(ClassProxiedRepositories.class);
    }

    @Test
    void aspectjModeRefusesFencedInterfacesOfJdkProxies() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(WovenRepositories.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("AccountRepository.withdraw(long, long)")
                .hasMessageContaining("such as a JDK proxy")
                .hasMessageContaining("PROXY mode");
    }

    private static void assertNamesTheInterface(Class<?> config) {
        CALLS.clear();
        try (var ctx = new AnnotationConfigApplicationContext(config)) {
            AccountRepository repository = ctx.getBean(AccountRepository.class);
            // the fence's proxy wraps the repository's own JDK proxy
            assertThat(AopUtils.isJdkDynamicProxy(repository)).isTrue();
            assertThatThrownBy(() -> repository.withdraw(7, 100))
                    .isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("AccountRepository.withdraw(long, long)")
                    .hasMessageNotContaining("$Proxy");
            FencingContext.run(new FencingToken("accounts:7", 2, "h"), () -> repository.withdraw(7, 100));
            assertThatThrownBy(() -> FencingContext.run(new FencingToken("accounts:7", 1, "h"),
                    () -> repository.withdraw(7, 100)))
                    .isInstanceOf(StaleTokenException.class)
                    .hasMessageContaining("AccountRepository.withdraw(long, long)")
                    .hasMessageNotContaining("$Proxy");
            assertThat(CALLS).containsExactly("withdraw");
        }
    }
}
