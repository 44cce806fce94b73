# conf/conf.mk: the example daemon configuration, installed as documentation
# into $(docdir)/examples (packagers copy it to $(sysconfdir)/dmlock/).
examplesdir = $(docdir)/examples
dist_examples_DATA = conf/dmlockd.conf.example
