package dev.fencing.spring.support;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.aopalliance.intercept.MethodInterceptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.target.HotSwappableTargetSource;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.lang.reflect.Method;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every fenced method of a proxy runs an interceptor of its own, which remembers its method's fence; an interceptor
 * that serves several methods or target classes still fences each call by its own method and class.
 */
@Timeout(60)
class FencingInterceptorTest {

    public interface Shelf {
        String put(String item);
    }

    public static class Books implements Shelf {
        @Fenced(resource = "books")
        public String put(String item) {
            return "book " + item;
        }

        @Fenced(resource = "loans")
        public String lend(String item) {
            return "lent " + item;
        }

        public String read(String item) {
            return "read " + item;
        }
    }

    public static class Records implements Shelf {
        @Fenced(resource = "records")
        public String put(String item) {
            return "record " + item;
        }
    }

    @Configuration
    @EnableFencing(proxyTargetClass = true)
    static class Config {
        @Bean
        Books books() {
            return new Books();
        }

        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }
    }

    private AnnotationConfigApplicationContext context;

    @AfterEach
    void close() {
        if (context != null) {
            context.close();
        }
    }

    /**
     * The chains Spring builds for a proxy with the application's advisor: a {@link ProxyFactory} is the proxy's
     * configuration, as the auto-proxy creator's is for the context's beans.
     */
    @Test
    void eachFencedMethodOfAProxyRunsItsOwnInterceptor() throws Exception {
        context = new AnnotationConfigApplicationContext(Config.class);
        assertThat(context.getBean(Books.class)).isInstanceOf(Advised.class);
        ProxyFactory factory = new ProxyFactory(new Books());
        factory.setProxyTargetClass(true);
        factory.addAdvisor(context.getBean("dev.fencing.internalFencingAdvisor", Advisor.class));
        Books books = (Books) factory.getProxy();
        Method put = Books.class.getMethod("put", String.class);
        Method lend = Books.class.getMethod("lend", String.class);

        List<Object> putChain = factory.getInterceptorsAndDynamicInterceptionAdvice(put, Books.class);
        List<Object> lendChain = factory.getInterceptorsAndDynamicInterceptionAdvice(lend, Books.class);
        assertThat(putChain).singleElement().isInstanceOf(FencingInterceptor.class);
        assertThat(lendChain).singleElement().isInstanceOf(FencingInterceptor.class);
        assertThat(putChain.get(0)).as("one interceptor per method").isNotSameAs(lendChain.get(0));
        assertThat(factory.getInterceptorsAndDynamicInterceptionAdvice(put, Books.class).get(0))
                .as("the proxy's chain is cached").isSameAs(putChain.get(0));
        assertThat(factory.getInterceptorsAndDynamicInterceptionAdvice(Books.class.getMethod("read", String.class),
                Books.class)).isEmpty();

        // each remembers its own method's fence: a token for one resource does not pass the other
        assertThat(FencingContext.call(new FencingToken("books", 3, "h"), () -> books.put("a"))).isEqualTo("book a");
        assertThat(FencingContext.call(new FencingToken("loans", 2, "h"), () -> books.lend("b"))).isEqualTo("lent b");
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("books", 9, "h"), () -> books.lend("c")))
                .isInstanceOf(MissingTokenException.class).hasMessageContaining("loans");
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("books", 2, "zombie"), () -> books.put("d")))
                .isInstanceOf(StaleTokenException.class);
        assertThat(context.getBean(InMemoryFenceStore.class).maxSeen("books")).hasValue(3);
        assertThat(context.getBean(InMemoryFenceStore.class).maxSeen("loans")).hasValue(2);
        // and the context's own proxy, built the same way, fences the same
        Books bean = context.getBean(Books.class);
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("loans", 1, "zombie"), () -> bean.lend("e")))
                .isInstanceOf(StaleTokenException.class);
    }

    /** An interceptor added to a proxy by hand serves all its methods: each call is fenced by its own method. */
    @Test
    void anInterceptorSharedByMethodsFencesEachByItsOwn() throws Exception {
        context = new AnnotationConfigApplicationContext(Config.class);
        MethodInterceptor shared = (MethodInterceptor) context
                .getBean("dev.fencing.internalFencingAdvisor", Advisor.class).getAdvice();
        ProxyFactory factory = new ProxyFactory(new Books());
        factory.setProxyTargetClass(true);
        factory.addAdvice(shared);
        Books books = (Books) factory.getProxy();

        // the first call is remembered; the others are different methods and must not take its fence
        assertThat(FencingContext.call(new FencingToken("books", 5, "h"), () -> books.put("a"))).isEqualTo("book a");
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("books", 5, "h"), () -> books.lend("b")))
                .isInstanceOf(MissingTokenException.class).hasMessageContaining("loans");
        assertThat(FencingContext.call(new FencingToken("books", 1, "zombie"), () -> books.read("c")))
                .as("not fenced, whatever the first call's fence").isEqualTo("read c");
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("books", 4, "zombie"), () -> books.put("d")))
                .isInstanceOf(StaleTokenException.class);
        assertThat(context.getBean(InMemoryFenceStore.class).maxSeen("loans")).isEmpty();
    }

    /** A target swapped for one of another class keeps its method but not its fence. */
    @Test
    void anInterceptorFencesEachTargetClassByItsOwn() throws Exception {
        context = new AnnotationConfigApplicationContext(Config.class);
        MethodInterceptor interceptor = (MethodInterceptor) context
                .getBean("dev.fencing.internalFencingAdvisor", Advisor.class).getAdvice();
        HotSwappableTargetSource targets = new HotSwappableTargetSource(new Books());
        ProxyFactory factory = new ProxyFactory();
        factory.setTargetSource(targets);
        factory.addInterface(Shelf.class);
        factory.addAdvice(interceptor);
        Shelf shelf = (Shelf) factory.getProxy();

        assertThat(FencingContext.call(new FencingToken("books", 5, "h"), () -> shelf.put("a"))).isEqualTo("book a");
        targets.swap(new Records());
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("books", 5, "h"), () -> shelf.put("b")))
                .isInstanceOf(MissingTokenException.class).hasMessageContaining("records");
        assertThat(FencingContext.call(new FencingToken("records", 1, "h"), () -> shelf.put("c")))
                .isEqualTo("record c");
        targets.swap(new Books());
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("books", 4, "zombie"), () -> shelf.put("d")))
                .isInstanceOf(StaleTokenException.class);
    }
}
