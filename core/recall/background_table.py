"""Background document frequencies of word stems (generated: do not edit).

Written by ``python -m benchmarks.quality.background`` from the docstrings of the standard
library of Python 3.11: ``DOCUMENTS`` docstrings, and for each Porter stem found in at least
3 of them, the number of docstrings holding it (``FREQUENCIES``: "stem count" pairs, most
frequent first). Read by :func:`swarmmem.core.recall.admission.background`.
"""

DOCUMENTS = 7660
FREQUENCIES = """
the 4737 a 3852 to 2874 of 2730 return 2675 is 2558 for 2182 and 2144 if 1976 in 1857 thi 1539
be 1518 or 1418 an 1359 us 1295 with 1253 it 1252 as 1178 that 1176 by 1093 on 1052 from 1033 ar
976 not 971 name 943 object 928 file 896 string 843 valu 825 call 736 class 732 all 723 set 708
argument 706 method 689 will 674 function 663 list 659 which 655 can 642 s 618 true 606 default
592 option 578 rais 575 given 565 none 552 when 551 instanc 485 specifi 482 no 477 number 474
creat 461 modul 444 data 434 1 430 ani 420 line 417 current 416 0 415 mai 399 path 397 python
396 at 389 should 389 onli 385 except 378 get 372 contain 368 read 367 type 357 messag 355
command 347 ha 345 but 340 have 337 other 336 gener 334 implement 334 t 334 byte 330 must 320
tupl 319 self 309 2 307 pass 305 then 305 error 304 format 304 new 304 base 302 same 298 exampl
297 like 296 charact 294 provid 291 widget 291 result 287 first 285 attribut 284 into 283 fals
274 text 273 header 267 also 263 otherwis 263 each 260 you 256 add 254 support 252 process 250
time 244 code 243 defin 240 write 238 e 235 wa 235 b 234 encod 232 item 225 either 224 directori
222 run 222 so 222 see 220 doe 217 includ 216 end 212 map 212 arg 211 server 210 start 208 case
207 empti 207 import 207 3 205 exist 205 handl 204 there 204 two 204 event 203 allow 200 kei 200
pars 200 order 198 version 198 x 198 more 197 paramet 197 where 196 note 194 posit 193 do 192
test 191 filenam 190 non 190 integ 189 intern 189 than 189 follow 188 close 187 window 187 up
186 open 185 inform 184 sourc 183 mode 182 sequenc 182 after 180 check 177 convert 175 singl 175
specif 174 found 173 g 173 need 171 connect 169 execut 169 standard 169 print 168 document 167
subclass 167 dictionari 166 element 166 befor 165 address 164 instead 164 output 164 packag 164
content 163 thei 163 possibl 162 user 161 variabl 160 differ 159 initi 158 remov 158 stream 158
whether 158 block 157 chang 157 context 157 iter 157 match 156 input 155 make 155 repres 153 rfc
153 c 152 been 149 most 148 some 148 we 145 sy 144 indic 143 py 143 between 142 oper 142 these
140 keyword 139 avail 138 flag 138 index 138 respons 138 interfac 137 without 137 handler 136
size 136 system 136 manag 135 request 135 form 134 such 134 thread 134 second 131 both 130
buffer 130 state 130 codec 129 socket 129 last 128 find 127 str 127 until 127 construct 126 i
126 level 126 int 125 entri 124 dict 123 local 123 copi 122 n 122 5 121 alwai 121 just 121 log
121 normal 121 replac 120 4 119 correspond 118 point 118 decod 117 wait 117 overrid 116 compil
115 decim 115 http 115 mean 115 pair 115 send 115 select 114 work 114 y 114 represent 113 next
112 take 112 valid 112 zero 111 ignor 110 parent 110 special 110 loop 109 requir 108 separ 108
turtl 108 determin 107 displai 107 refer 107 valueerror 107 accept 105 callabl 105 os 105 parser
105 part 105 their 105 constructor 104 doesn 104 ad 102 alreadi 102 protocol 102 delet 101 anoth
100 depend 100 wrap 100 search 99 complet 98 configur 98 futur 97 cannot 96 applic 95 occur 95
identifi 94 member 94 root 94 accord 93 extens 93 origin 93 over 93 about 92 actual 92 record 92
suppli 92 addit 91 onc 91 8 90 access 90 distribut 90 multipl 90 style 90 them 90 binari 89
place 89 regist 89 control 88 resourc 88 info 87 deprec 86 helper 86 want 86 environ 85 field 85
store 85 wai 85 10 84 stop 84 xml 84 detail 83 equival 83 abstract 82 done 82 out 82 txt 82
written 82 float 81 port 81 share 81 width 81 compat 80 frame 80 namespac 80 quot 80 sinc 80
underli 80 unix 80 child 79 count 79 fail 79 load 79 rang 79 f 78 left 78 librari 78 prefix 78
queue 78 through 78 host 77 receiv 77 space 77 tree 77 were 77 describ 76 perform 76 simpl 76
those 76 url 76 present 75 append 74 associ 74 give 74 html 74 length 74 try 74 clear 73 compar
73 expect 73 how 73 r 73 6 72 assum 72 automat 72 dir 72 logger 72 mailbox 72 neg 72 termin 72
unless 72 archiv 71 callback 71 directli 71 even 71 global 71 interpret 71 tag 71 don 70 invalid
70 program 70 coordin 69 instal 69 would 69 itself 68 spec 68 bound 67 comput 67 exit 67 id 67
necessari 67 script 67 appli 66 debug 66 main 66 modifi 66 traceback 66 usag 66 becaus 65 common
65 coroutin 65 equal 65 final 65 gencodec 65 imag 65 long 65 platform 65 within 65 appropri 64
mark 64 right 64 screen 64 stack 64 timeout 64 transport 64 wrapper 64 yield 64 built 63 insert
63 look 63 numer 63 operand 63 signal 63 api 62 client 62 custom 62 full 62 invok 62 link 62
master 62 mime 62 omit 62 rel 62 sever 62 attempt 61 group 61 help 61 instanti 61 produc 61 re
61 ascii 60 build 60 date 60 distutil 60 ensur 60 extendedcontext 60 limit 60 newlin 60 o 60
boolean 59 consid 59 everi 59 recurs 59 round 59 d 58 email 58 eof 58 node 58 raw 58 releas 58
report 58 7 57 appear 57 back 57 cach 57 cancel 57 factori 57 here 57 pep 57 updat 57 what 57
abc 56 bit 56 io 56 symbol 56 total 56 descriptor 55 els 55 lock 55 sort 55 success 55 while 55
collect 54 express 54 immedi 54 per 54 properti 54 section 54 well 54 word 54 canva 53 digit 53
extra 53 keyerror 53 similar 53 turn 53 via 53 absolut 52 begin 52 reset 52 safe 52 usual 52
your 52 arbitrari 51 def 51 locat 51 memori 51 msg 51 activ 50 direct 50 extract 50 queri 50
task 50 warn 50 behavior 49 init 49 isn 49 pattern 49 signatur 49 bind 48 condit 48 etc 48 ip 48
made 48 maximum 48 split 48 strict 48 top 48 basic 47 exactli 47 loader 47 nan 47 network 47
target 47 whitespac 47 dot 46 keep 46 least 46 p 46 regular 46 retriev 46 skip 46 syntax 46 tab
46 tabl 46 unicod 46 vendor 46 whose 46 caus 45 charset 45 could 45 cursor 45 dure 45 escap 45
height 45 avoid 44 bodi 44 caller 44 decor 44 failur 44 func 44 lead 44 mani 44 pathnam 44
previou 44 random 44 stdout 44 structur 44 token 44 typic 44 under 44 abov 43 button 43 column
43 compon 43 enabl 43 entir 43 fd 43 filter 43 obj 43 polici 43 real 43 repr 43 reserv 43 sent
43 util 43 variou 43 continu 42 docstr 42 foo 42 mock 42 never 42 noth 42 particular 42 suitabl
42 ttk 42 altern 41 anyth 41 assert 41 color 41 compress 41 cooki 41 doc 41 head 41 intend 41
join 41 move 41 put 41 tk 41 w 41 comment 40 datetim 40 extend 40 howev 40 len 40 lineno 40
overridden 40 param 40 registri 40 respect 40 sub 40 trace 40 typ 40 50 39 below 39 com 39
effect 39 own 39 remain 39 runtim 39 sign 39 stderr 39 9 38 descript 38 doctest 38 off 38 offset
38 org 38 pipe 38 posix 38 public 38 setup 38 show 38 tcl 38 tell 38 three 38 view 38 breakpoint
37 calcul 37 constant 37 deriv 37 hook 37 inherit 37 kwarg 37 rather 37 readabl 37 scheme 37
treat 37 year 37 becom 36 consist 36 convers 36 enter 36 miss 36 recent 36 rpc 36 rule 36
statement 36 subprocess 36 transfer 36 unknown 36 action 35 assign 35 asynchron 35 background 35
chunk 35 comparison 35 creation 35 enum 35 flush 35 insid 35 menu 35 pickl 35 privat 35 side 35
simpli 35 ssl 35 subwidget 35 takefocu 35 temporari 35 alias 34 dai 34 duplic 34 exc 34 featur
34 hash 34 ipv6 34 less 34 metadata 34 old 34 reason 34 relat 34 trail 34 tri 34 turtlescreen 34
bytesio 33 children 33 conveni 33 disabl 33 expand 33 outsid 33 plu 33 printabl 33 proxi 33
subsequ 33 though 33 too 33 uniqu 33 utf 33 base64 32 blank 32 builtin 32 counter 32 exact 32
hold 32 indent 32 liter 32 month 32 pixel 32 sax 32 smtp 32 annot 31 around 31 backward 31 bar
31 correct 31 domain 31 down 31 emit 31 interact 31 label 31 oserror 31 pack 31 page 31 post 31
save 31 statu 31 still 31 strip 31 togeth 31 veri 31 acquir 30 algorithm 30 ask 30 cl 30 draw 30
finder 30 micsft 30 might 30 probabl 30 readlin 30 shell 30 taken 30 thing 30 typeerror 30 unit
30 100 29 adjust 29 against 29 await 29 explicitli 29 expon 29 finish 29 infin 29 ipv4 29 lookup
29 password 29 precis 29 reach 29 resolv 29 stat 29 yet 29 32 28 definit 28 increment 28 manipul
28 nest 28 pad 28 prompt 28 readi 28 selector 28 static 28 symlink 28 browser 27 consum 27 fill
27 fix 27 font 27 issu 27 known 27 preced 27 reader 27 schedul 27 serv 27 someth 27 unchang 27
abl 26 char 26 combin 26 copyright 26 detect 26 fetch 26 filesystem 26 forward 26 guarante 26
ident 26 logic 26 m 26 max 26 ok 26 prevent 26 routin 26 suffix 26 translat 26 again 25 authent
25 best 25 config 25 fraction 25 h 25 ie 25 languag 25 low 25 mix 25 much 25 plain 25 purpos 25
tar 25 zip 25 act 24 addr 24 attach 24 break 24 bytecod 24 certain 24 cgi 24 checker 24 clean 24
concret 24 declar 24 dialog 24 discard 24 eg 24 focu 24 forc 24 high 24 know 24 later 24 lower
24 obtain 24 occurr 24 quit 24 semant 24 short 24 subset 24 subtyp 24 tarinfo 24 timestamp 24
truncat 24 verbos 24 8859 23 asyncio 23 attr 23 databas 23 dispatch 23 divid 23 dummi 23 encount
23 gnu 23 happen 23 individu 23 instruct 23 leav 23 longer 23 recommend 23 resp 23 restor 23
revers 23 row 23 sampl 23 scope 23 seek 23 shape 23 shutdown 23 step 23 00 22 2822 22 ab 22
affect 22 alia 22 angl 22 desir 22 destroi 22 embed 22 everyth 22 exec 22 fold 22 formatt 22
gzip 22 hostnam 22 iso 22 model 22 modif 22 multi 22 problem 22 recogn 22 runtimeerror 22 unlik
22 upon 22 virtual 22 week 22 wsgi 22 12 21 25 21 255 21 adapt 21 anchor 21 andr 21 arrai 21
async 21 cfw 21 delimit 21 disk 21 dump 21 feed 21 fullnam 21 had 21 hierarchi 21 json 21 k 21
lemburg 21 mal 21 marc 21 multipart 21 orient 21 partial 21 pre 21 pyc 21 realli 21 rememb 21
remot 21 resum 21 retain 21 squar 21 successfulli 21 sure 21 tagorid 21 transform 21 whenev 21
won 21 11 20 argv 20 bitmap 20 cell 20 channel 20 exclud 20 framework 20 free 20 further 20 glob
20 iff 20 lib 20 listen 20 mac 20 maintain 20 meta 20 optim 20 po 20 relief 20 scale 20 serial
20 site 20 undefin 20 upper 20 utc 20 var 20 writer 20 16 19 30 19 amount 19 canon 19 captur 19
delai 19 doubl 19 dst 19 endian 19 evalu 19 extern 19 greater 19 higher 19 importerror 19 inf 19
larg 19 machin 19 now 19 payload 19 pid 19 pop 19 prioriti 19 red 19 reduc 19 rest 19 scrollbar
19 silent 19 slash 19 src 19 stdin 19 suit 19 templat 19 tool 19 travers 19 uri 19 visibl 19
watcher 19 xxx 19 barrier 18 bool 18 borderwidth 18 cleanup 18 cmd 18 complex 18 defect 18
descend 18 finit 18 kw 18 l 18 larger 18 neither 18 num 18 patch 18 polygon 18 prepar 18 preserv
18 proper 18 scan 18 secur 18 spawn 18 substitut 18 v 18 www 18 60 17 alloc 17 backslash 17 box
17 broken 17 capabl 17 choos 17 commonli 17 concaten 17 devic 17 dynam 17 famili 17 foreground
17 ftp 17 graphic 17 grid 17 impli 17 importlib 17 infinit 17 mechan 17 mous 17 nor 17 prepend
17 properli 17 servic 17 session 17 subel 17 thu 17 timer 17 timezon 17 unpack 17 writabl 17 y1
17 along 16 boundari 16 cnri 16 compound 16 deal 16 dom 16 effici 16 entiti 16 export 16 fall 16
fit 16 four 16 guess 16 human 16 inspect 16 isinst 16 iso8859 16 let 16 notifi 16 null 16 our 16
overlap 16 placehold 16 pointer 16 predic 16 pretti 16 synchron 16 textvari 16 variant 16
warranti 16 x00 16 x1 16 128 15 75 15 behaviour 15 big 15 bottom 15 care 15 chain 15 convent 15
core 15 design 15 eoferror 15 executor 15 expir 15 explicit 15 fallback 15 fp 15 frozen 15 go 15
highlightbackground 15 highlightcolor 15 hint 15 integr 15 interest 15 interpol 15 kind 15
logrecord 15 measur 15 minimum 15 mixin 15 nearest 15 often 15 pc 15 permiss 15 popul 15 potenti
15 prefer 15 profil 15 quiet 15 ratio 15 regardless 15 repeat 15 rotat 15 sequencematch 15
statist 15 struct 15 subtract 15 summari 15 switch 15 tagnam 15 testcas 15 titl 15 tl 15
transpar 15 trigger 15 uncompress 15 underlin 15 undo 15 usabl 15 visual 15 weekdai 15 whole 15
20 14 64 14 across 14 alter 14 arrang 14 atom 14 awar 14 blue 14 ccompil 14 de 14 decid 14 emin
14 env 14 exp 14 expos 14 fun 14 good 14 grammar 14 highlightthick 14 home 14 increas 14 latter
14 legaci 14 littl 14 localhost 14 mu 14 netmask 14 nowait 14 ob 14 pen 14 popen 14 press 14
returncod 14 segment 14 sock 14 soon 14 speed 14 subdirectori 14 tix 14 tkinter 14 toplevel 14
tripl 14 unexpect 14 union 14 verifi 14 1e 13 22 13 abort 13 addition 13 af 13 aliv 13 approxim
13 author 13 auto 13 bg 13 calendar 13 certif 13 come 13 compliant 13 concurr 13 debugg 13 del
13 destin 13 deviat 13 diff 13 dry 13 edit 13 emax 13 enclos 13 exclus 13 fast 13 fragment 13
geometri 13 handshak 13 hex 13 insensit 13 lost 13 minu 13 multiprocess 13 newli 13 owner 13
paus 13 period 13 portion 13 prior 13 push 13 relev 13 repli 13 seen 13 semaphor 13 smaller 13
snan 13 sslcontext 13 submodul 13 timedelta 13 trap 13 u 13 unquot 13 walk 13 15 12 2001 12 2047
12 24 12 302 12 alphabet 12 appl 12 articl 12 ast 12 behav 12 builder 12 cancellederror 12
conform 12 corner 12 deleg 12 drawn 12 emul 12 enough 12 faster 12 figur 12 fileobj 12 formal 12
getopt 12 hand 12 hard 12 hardwar 12 hit 12 idea 12 imap4 12 intermedi 12 junk 12 lambda 12 lang
12 legal 12 linesep 12 live 12 ll 12 login 12 lowercas 12 mail 12 marker 12 minim 12 mostli 12
nicer 12 nonzero 12 octet 12 opcod 12 overview 12 pane 12 previous 12 propag 12 pure 12 rb 12
regex 12 restrict 12 sep 12 slow 12 sometim 12 spinbox 12 track 12 univers 12 unlock 12 unpickl
12 unus 12 wake 12 whatev 12 y2 12 13 11 31 11 abcd 11 among 11 attributeerror 11 bad 11 bd 11
bin 11 caught 11 circl 11 click 11 coeffici 11 comma 11 compact 11 consol 11 datagram 11 delta
11 didn 11 digest 11 distanc 11 drop 11 elimin 11 enumer 11 especi 11 establish 11 ever 11 forev
11 fork 11 front 11 fulli 11 getattr 11 gif 11 hashabl 11 hidden 11 iana 11 inclus 11 incomplet
11 index1 11 index2 11 inexact 11 inputsourc 11 interv 11 introspect 11 kept 11 kill 11 mention
11 middl 11 notif 11 obsolet 11 overwritten 11 panedwindow 11 paramspec 11 portabl 11 redirect
11 renam 11 render 11 reus 11 scroll 11 seq 11 sig 11 sigma 11 sum 11 super 11 suppress 11
targetpath 11 textiowrapp 11 theme 11 therefor 11 toward 11 typevar 11 unittest 11 unmap 11
unsupport 11 vertic 11 worker 11 x2 11 zipfil 11 2965 10 999 10 account 10 advanc 10 alpha 10
although 10 asserttru 10 awai 10 better 10 bunch 10 bytearrai 10 closest 10 colon 10 colormap 10
configpars 10 cycl 10 daemon 10 dbm 10 denomin 10 disposit 10 dll 10 due 10 essenti 10 ext 10
fanci 10 flow 10 functool 10 garbag 10 getitem 10 gmt 10 goe 10 green 10 incom 10 independ 10
inet 10 invoc 10 j 10 le 10 letter 10 linear 10 macro 10 magic 10 major 10 makefil 10 matter 10
microsecond 10 minor 10 movement 10 mtime 10 necessarili 10 notat 10 older 10 onto 10 op 10
perhap 10 pleas 10 poll 10 prec 10 presum 10 proce 10 processor 10 q 10 qualifi 10 remaind 10
resolut 10 sens 10 shall 10 similarli 10 slice 10 slightli 10 stuff 10 subject 10 tarfil 10 tb
10 term 10 timeouterror 10 transmit 10 turtleshap 10 unlink 10 unspecifi 10 usernam 10 web 10
wish 10 world 10 xmlreader 10 zone 10 01 9 192 9 23 9 3333 9 80 9 8601 9 8bit 9 activebackground
9 approach 9 arithmet 9 arrow 9 aspect 9 audio 9 bzip2 9 checkbutton 9 choic 9 clone 9 commun 9
correctli 9 cpython 9 cte 9 ctype 9 cumul 9 dataclass 9 depth 9 dest 9 disassembl 9 dist 9 divis
9 drive 9 driven 9 driver 9 dtd 9 ellipsi 9 entrypath 9 entrypoint 9 epoch 9 eventu 9 ex 9 fifo
9 filelist 9 hello 9 helo 9 hexadecim 9 horizont 9 icon 9 involv 9 ipv4network 9 issubclass 9
justifi 9 linker 9 longest 9 lt 9 merg 9 metaclass 9 microsoft 9 my 9 namedtupl 9 natur 9 ndiff
9 notebook 9 notimplementederror 9 od 9 opt 9 overwrit 9 padi 9 padx 9 parti 9 pend 9 physic 9
pow 9 power 9 pydoc 9 question 9 rectangl 9 robot 9 runner 9 satisfi 9 sequenti 9 shallow 9
shouldn 9 simultan 9 slave 9 small 9 smallest 9 snapshot 9 streamread 9 streamwrit 9 subpart 9
sun 9 surrogateescap 9 syntaxerror 9 tcp 9 textual 9 third 9 uid 9 underscor 9 unmodifi 9 uuid 9
weight 9 xff 9 xscrollcommand 9 z 9 0e 8 1000 8 123 8 14 8 17 8 200 8 2045 8 42 8 abbrevi 8 aix
8 almost 8 anim 8 app 8 bare 8 beyond 8 categori 8 caution 8 center 8 chosen 8 classnam 8
collaps 8 combobox 8 compresslevel 8 confus 8 cook 8 critic 8 crlf 8 decrement 8 develop 8 did 8
distinct 8 distinguish 8 earlier 8 ehlo 8 engin 8 esmtp 8 examin 8 exce 8 exhaust 8 fact 8 fg 8
fileno 8 flexibl 8 folder 8 former 8 greet 8 handi 8 hierarch 8 hour 8 jsonencod 8 jump 8
launcher 8 linux 8 listbox 8 localtim 8 lot 8 lzma 8 machineri 8 mailcap 8 mayb 8 mbox 8 meant 8
millisecond 8 misc 8 mm 8 monitor 8 msvc 8 normaldist 8 notic 8 nt 8 optionflag 8 optionpars 8
ordin 8 pathlik 8 percent 8 piec 8 pipelin 8 proto 8 ration 8 rawturtl 8 reflect 8 reliabl 8
repeatedli 8 rfc822 8 rgb 8 rollov 8 seem 8 shift 8 shorthand 8 shown 8 signific 8 slider 8 slot
8 stopiter 8 subnorm 8 substr 8 suppos 8 themselv 8 unam 8 unsaf 8 unset 8 utf8 8 val 8 varianc
8 weak 8 wm 8 xpath 8 ye 8 127 7 2000 7 21 7 34 7 40 7 5322 7 7bit 7 addressvalueerror 7
afterward 7 aka 7 anywher 7 apart 7 area 7 assertequ 7 attrib 7 basenam 7 basicconfig 7 baz 7
bcc 7 belong 7 bz2 7 chainmap 7 circular 7 colormod 7 const 7 contextu 7 dd 7 detach 7 dev 7 di
7 disabledforeground 7 discov 7 dn 7 easi 7 easier 7 east 7 encapsul 7 envelop 7 eq 7 expat 7
far 7 fault 7 few 7 flatten 7 fn 7 framesummari 7 frequenc 7 gcc 7 got 7 gz 7 hasn 7 hi 7 idl 7
improv 7 infer 7 inplac 7 jan 7 knowledg 7 launch 7 ls 7 maildir 7 mainli 7 maintyp 7 manual 7
marshal 7 math 7 maxsiz 7 meaning 7 menubutton 7 mh 7 minut 7 mmdf 7 mro 7 ms 7 mutat 7 nativ 7
nbyte 7 near 7 newtag 7 notion 7 odd 7 offer 7 optionmenu 7 ordinari 7 outlin 7 overload 7 peer
7 pem 7 phrase 7 pool 7 presenc 7 primarili 7 pull 7 qnan 7 radiobutton 7 reli 7 resiz 7 rt 7
sai 7 sax2 7 selectbackground 7 selectforeground 7 sentinel 7 shapes 7 simplest 7 softwar 7
stamp 7 tail 7 testsuit 7 ti 7 tracker 7 tzinfo 7 unbind 7 uniformli 7 unregist 7 urllib 7 usr 7
uuencod 7 vari 7 vector 7 water 7 wb 7 white 7 who 7 x80 7 xmlparser 7 zipimporterror 7 zipinfo
7 0000 6 1994 6 2373 6 256 6 45 6 abbb 6 accordingli 6 activeforeground 6 agent 6 aiff 6 align 6
ancestor 6 anonym 6 answer 6 architectur 6 aren 6 augment 6 authobject 6 awaken 6 basi 6 beta 6
blockingioerror 6 bnf 6 bpnumber 6 bug 6 candid 6 cfg 6 claim 6 classic 6 cm 6 cmp 6 co 6
complic 6 conflict 6 cookiejar 6 couldn 6 cours 6 covari 6 cover 6 csv 6 cv 6 datatyp 6 db8 6
defer 6 degre 6 duck 6 dumb 6 ed 6 egg 6 elem 6 elementtre 6 en 6 encrypt 6 enhanc 6 enqueu 6
eval 6 explain 6 exportselect 6 facil 6 failobj 6 favor 6 fillcolor 6 fixtur 6 floor 6 fnmatch 6
fs 6 fw 6 gather 6 getmemb 6 getstat 6 gid 6 grab 6 graph 6 half 6 hide 6 highlight 6 hmac 6
holder 6 hyphen 6 implicit 6 incorrectli 6 incrementaldecod 6 incrementalencod 6 inet6 6 insofar
6 internet 6 introduc 6 invalidoper 6 invari 6 ipv 6 ipv6network 6 job 6 kernel 6 labelfram 6
largest 6 layout 6 leftmost 6 lookuperror 6 mask 6 matrix 6 median 6 min 6 miscellan 6 mkstemp 6
mod 6 moment 6 mondai 6 multilin 6 multipli 6 mutabl 6 negoti 6 newer 6 nice 6 nonneg 6 onclick
6 oppos 6 overflow 6 overflowerror 6 overhead 6 paragraph 6 parenthes 6 passwd 6 pathlib 6 pax 6
pdb 6 perman 6 picklabl 6 pickler 6 pip 6 pkg 6 plist 6 posixpath 6 ppm 6 prefixlen 6 primari 6
quickli 6 race 6 redefin 6 referenc 6 refus 6 reload 6 reloc 6 resizemod 6 sash 6 seekabl 6 shot
6 splitlin 6 stacksummari 6 statisticserror 6 summar 6 sundai 6 superclass 6 syscal 6 teardown 6
telnet 6 testmod 6 testresult 6 thereof 6 throw 6 tilt 6 timeit 6 tokenlist 6 transact 6 tty 6
twice 6 typeddict 6 tz 6 unabl 6 unavail 6 unbound 6 understand 6 visit 6 wildcard 6 writelin 6
ws 6 xb 6 xz 6 yourself 6 19 5 2008 5 2231 5 250 5 27 5 29 5 3147 5 33 5 48 5 90 5 absent 5
abstractmethod 5 accumul 5 adher 5 advantag 5 aifc 5 alon 5 alphanumer 5 ambigu 5 analog 5
anywai 5 arbitrarili 5 arch 5 arcnam 5 auth 5 babyl 5 backup 5 bdbquit 5 bitwis 5 bootstrap 5
border 5 btn 5 bufferediobas 5 bufferedread 5 calledprocesserror 5 carri 5 catch 5 classmethod 5
clock 5 closer 5 coerc 5 colorstr 5 composit 5 consult 5 cpu 5 cur 5 decrypt 5 deep 5 delitem 5
dgram 5 divmod 5 doctestrunn 5 drag 5 drain 5 dtext 5 echo 5 effort 5 enforc 5 err 5 eventloop 5
expans 5 face 5 fileexistserror 5 fine 5 five 5 fmt 5 forkserv 5 funcnam 5 gamma 5 gatewai 5
grow 5 gt 5 hardlink 5 heap 5 heappop 5 henc 5 hh 5 highest 5 hlist 5 houston 5 iac 5 identif 5
immut 5 inconsist 5 insertbackground 5 interior 5 interrupt 5 ipaddress 5 ipv4address 5 java 5
javascript 5 keyfil 5 latin 5 lazi 5 lc 5 lf 5 log10 5 logarithm 5 logo 5 lose 5 mainloop 5
manifest 5 markup 5 maxheap 5 maxlinelen 5 md5 5 memo 5 metavar 5 msvccompil 5 multical 5
multithread 5 nb 5 netscap 5 nntp 5 noop 5 observ 5 oldest 5 packet 5 parallel 5 past 5 pasv 5
pencolor 5 pensiz 5 perl 5 pick 5 practic 5 predefin 5 preprocessor 5 primit 5 proactor 5
processpoolexecutor 5 product 5 progress 5 protect 5 prune 5 ptext 5 pth 5 pty 5 purepath 5
pypirc 5 quantiz 5 queu 5 radian 5 rate 5 rawiobas 5 readonli 5 recalcul 5 recreat 5 redo 5 ref
5 reformat 5 reopen 5 reproduc 5 rescal 5 retr 5 rfc2047 5 rightmost 5 risk 5 rout 5
scrolledlistbox 5 seed 5 selectborderwidth 5 sendfil 5 sendmail 5 sensit 5 serializ 5 setitem 5
setpo 5 simplexmlrpcserv 5 simplifi 5 simul 5 situat 5 sleep 5 smtputf8 5 socketio 5 sole 5
someon 5 sound 5 spam 5 span 5 sslsocket 5 strftime 5 strictli 5 strictvers 5 stringio 5
subcommand 5 submit 5 subtre 5 suffici 5 surround 5 swap 5 tempdir 5 temporarili 5 testclass 5
tmp 5 toggl 5 topic 5 treatment 5 typecheck 5 udp 5 un 5 underflow 5 unifi 5 upgrad 5 urlopen 5
utcoffset 5 varnum 5 vs 5 waitpid 5 watch 5 welcom 5 west 5 why 5 wide 5 wraplength 5 x03 5
xmlrpc 5 xx 5 yscrollcommand 5 yyyi 5 zip64 5 07 4 10000 4 101 4 1010 4 110 4 1101 4 1234 4 1999
4 2005 4 20def 4 240 4 247 4 26 4 28 4 282 4 32767 4 32768 4 35 4 4122 4 512 4 59 4 67 4 70 4 77
4 8000 4 822 4 acl 4 adjac 4 aexit 4 alert 4 analyz 4 argumentpars 4 attrtext 4 autospec 4
awoken 4 backslashreplac 4 band 4 bcde 4 becam 4 benefit 4 binascii 4 blocksiz 4 branch 4
broadcast 4 builddat 4 bye 4 bypass 4 bytestr 4 c14n 4 came 4 cc 4 certfil 4 charjunk 4 chrome 4
clearstamp 4 clockwis 4 cmdclass 4 col 4 comp 4 complement 4 complianc 4 consecut 4 consider 4
constraint 4 contigu 4 contribut 4 counterclockwis 4 coverag 4 cr 4 cross 4 ctext 4 ctl 4 cut 4
dash 4 dataset 4 deadlock 4 decompress 4 decreas 4 deem 4 deliv 4 deliveri 4 diagram 4 dirlist 4
dirnam 4 displayof 4 distutilsfileerror 4 doctestpars 4 dyld 4 eager 4 easili 4 ebcdic 4 edg 4
elsewher 4 enc 4 endpoint 4 estim 4 expandus 4 familiar 4 fancygetopt 4 fastest 4 forkingmixin 4
fqdn 4 fresh 4 ge 4 generatorexit 4 getclasstre 4 getcomptyp 4 getframer 4 getnchannel 4
getnfram 4 getrandbit 4 getroot 4 getsampwidth 4 goto 4 guard 4 guido 4 hack 4 headersonli 4
heappush 4 held 4 heurist 4 honor 4 honour 4 hostmask 4 httpconnect 4 httprespons 4 illeg 4 imap
4 implicitli 4 impos 4 imposs 4 incorpor 4 incorrect 4 indirectli 4 initialis 4 inject 4 inner 4
insertborderwidth 4 insertofftim 4 insertontim 4 insertwidth 4 intact 4 intent 4 intenum 4
invalidcommand 4 invalidstateerror 4 invers 4 invert 4 invis 4 iocp 4 ipv6address 4 iso8601 4
itermonthd 4 januari 4 lack 4 late 4 layer 4 ld 4 leaf 4 lexic 4 licens 4 lightweight 4 likewis
4 linejunk 4 lo 4 lowest 4 macosx 4 magicmock 4 malform 4 meet 4 mega 4 meth 4 midst 4 mimic 4
mind 4 mirror 4 modulo 4 mon 4 mortem 4 motif 4 motion 4 multiplex 4 mung 4 naiv 4 narrow 4
nearli 4 net 4 netmaskvalueerror 4 netrc 4 nois 4 nonempti 4 nov 4 ns 4 nthree 4 ntree 4 ntwo 4
onward 4 opportun 4 outer 4 particularli 4 patchlevel 4 percentil 4 permit 4 pgm 4 phase 4 pi 4
plat 4 poli 4 pop3 4 predecessor 4 preset 4 prog 4 programmat 4 project 4 pvarianc 4 pyd 4 pypi
4 qname 4 qp 4 quotat 4 rawconfigpars 4 rcpt 4 readfram 4 readinto 4 recipi 4 reconstruct 4 recv
4 repeatdelai 4 repeatinterv 4 repetit 4 requesthandlerclass 4 rerais 4 retrlin 4 reveal 4 revis
4 rewind 4 rewrit 4 rfc2231 4 rfc5322 4 rfile 4 rset 4 rw 4 sajip 4 saxexcept 4 selectcolor 4
selectorkei 4 sensibl 4 seq1 4 seq2 4 seri 4 setcomptyp 4 setframer 4 setlocal 4 setnchannel 4
setnfram 4 setparam 4 setsampwidth 4 setstat 4 sf 4 shelf 4 shorter 4 shortest 4 sigkil 4
simpledialog 4 smtpheloerror 4 snippet 4 solari 4 sophist 4 spars 4 sql 4 ss 4 st 4 stand 4
statespec 4 sticki 4 stopasynciter 4 stretch 4 stretchfactor 4 strong 4 stub 4 subnet 4
subscript 4 succe 4 supplement 4 suspend 4 sync 4 synch 4 systemexit 4 temp 4 tempfil 4
texttestrunn 4 think 4 thousand 4 threadpoolexecutor 4 tiff 4 toml 4 tracer 4 tradit 4 ts 4
typevartupl 4 uabcd 4 unambigu 4 undobuff 4 undon 4 uniform 4 unixfrom 4 unpars 4 unread 4 unrel
4 unsupportedoper 4 unwrap 4 upload 4 v4 4 v6 4 validatecommand 4 vararg 4 variat 4 varkw 4 venv
4 versa 4 vice 4 vinai 4 violat 4 wasn 4 weakref 4 wheel 4 whenc 4 win 4 win32 4 worth 4 wrong 4
wt 4 x00abc 4 x00abcdef 4 x03abcdef 4 x11 4 x7f 4 yellow 4 zipimport 4 00000000 3 00000003 3 001
3 02 3 08 3 1007 3 1024 3 1100 3 1111 3 120 3 123456789 3 124 3 1415 3 1521 3 1766 3 18 3 1952 3
2010 3 2396 3 2to3 3 37 3 3977 3 3986 3 41 3 456 3 484 3 6125 3 72 3 76 3 78 3 8192 3 821 3 87 3
89 3 8bitmim 3 99 3 999999999 3 abcdef 3 abi 3 abil 3 acceler 3 accur 3 acm 3 addbitmapdir 3
administr 3 advertis 3 ag 3 aggreg 3 amd64 3 anymor 3 articleinfo 3 ascii85 3 assertrais 3
assertwarn 3 astr 3 asynccontextmanag 3 atext 3 attent 3 au 3 aug 3 averag 3 backgroundcolor 3
backlog 3 base16 3 base85 3 basehttpserv 3 baseserv 3 bdb 3 bdist 3 behind 3 bgcolor 3 bindtag 3
black 3 blanklin 3 bogu 3 bold 3 bom 3 boundargu 3 brace 3 bracket 3 brief 3 bring 3 buf 3
bufferedwrit 3 bufsiz 3 bundl 3 busi 3 buttonpress 3 buttonreleas 3 bztar 3 c3 3 ca 3 canonic 3
capac 3 capit 3 cast 3 cb 3 cdata 3 ceil 3 cert 3 cgihandl 3 chmod 3 chunksiz 3 circumst 3
classvar 3 clipboard 3 closur 3 cmdloop 3 coercion 3 collector 3 commandlin 3 compileflag 3
compos 3 comprehens 3 conjug 3 conjunct 3 conn 3 constrain 3 contextmanag 3 cookie2 3 coord 3
copytre 3 coro 3 counterpart 3 cram 3 criteria 3 crypt 3 ctime 3 ctx 3 curdir 3 curs 3 cygwin 3
datefmt 3 daylight 3 db 3 dead 3 deadlin 3 deconstruct 3 defaultsect 3 demand 3 demo 3 densiti 3
dep 3 dereferenc 3 deseri 3 despit 3 diagnost 3 dialect 3 differenc 3 dimension 3 disappear 3
discoveri 3 displaylist 3 distributionfind 3 distutilssetuperror 3 dividend 3 dlopen 3 download
3 dragto 3 dunder 3 durat 3 earli 3 emac 3 emu 3 endchar 3 eol 3 ep 3 epol 3 errorhandl 3 etyp 3
excel 3 exfileselectbox 3 exponenti 3 extent 3 extraglob 3 extrem 3 fairli 3 feel 3 fieldstorag
3 fileconfig 3 filedialog 3 fileinput 3 filenotfounderror 3 fileselectbox 3 fileselectdialog 3
flash 3 focusin 3 focusout 3 forwardref 3 foundat 3 friend 3 friendli 3 fromfil 3 fromlin 3
funcid 3 furthermor 3 gain 3 gen 3 geometr 3 getcompnam 3 getfixtur 3 getmark 3 getparam 3
getset 3 getstatusoutput 3 geturl 3 gmtime 3 graviti 3 greatest 3 greedi 3 guid 3 gzipfil 3
gztar 3 hashlib 3 headerparseerror 3 helpformatt 3 hideturtl 3 htmldiff 3 httperror 3 hypertext
3 ibm 3 ideal 3 ietf 3 inact 3 incompat 3 indexerror 3 indirect 3 infil 3 initarg 3 inlin 3
inspectload 3 intel 3 interactiveinterpret 3 intercept 3 internation 3 intersect 3 interspers 3
intralin 3 intrins 3 intuit 3 intvar 3 iobas 3 isfunct 3 ish 3 isocalendar 3 jpeg 3 jsondecod 3
keepend 3 keyboard 3 koi8 3 la 3 law 3 leader 3 leap 3 li 3 libfoo 3 libnam 3 lifo 3 linkag 3 ln
3 localeconv 3 long1 3 loopback 3 lru 3 macintosh 3 maco 3 mandatori 3 manner 3 marknam 3
maxheaderlen 3 maxim 3 maxlen 3 mbc 3 me 3 memoryview 3 metapathfind 3 methodhelp 3 mid 3
middlewar 3 minidom 3 minsiz 3 mono 3 monoton 3 mount 3 multicast 3 mutual 3 narg 3 navig 3 nemu
3 netloc 3 newest 3 nonloc 3 nonprintabledefect 3 north 3 notimpl 3 nsew 3 offici 3 offvalu 3
okai 3 onerror 3 onvalu 3 openpti 3 openssl 3 optik 3 optpars 3 outcom 3 outerboundari 3 outfil
3 outputcheck 3 p1 3 p2 3 parameter 3 passiv 3 pathsep 3 pbm 3 pendown 3 penup 3 persist 3
pertain 3 photo 3 photoimag 3 popular 3 postel 3 pprint 3 predict 3 preexist 3 preprocess 3
procedur 3 programm 3 prohibit 3 promot 3 pseudo 3 purposefulli 3 putrequest 3 pyconfig 3
qcontent 3 qs 3 qsize 3 qsl 3 quick 3 quota 3 quotechar 3 radio 3 ran 3 rare 3 rc 3 reachabl 3
reacquir 3 realnam 3 receipt 3 recompil 3 recover 3 recursionerror 3 recwarn 3 reentrant 3
refold 3 refresh 3 regard 3 region 3 registr 3 regress 3 reimplement 3 reject 3 relationship 3
requot 3 resembl 3 resourceread 3 respond 3 restart 3 retri 3 rossum 3 roughli 3 safeti 3 salt 3
scrollabl 3 sdist 3 selectablegroup 3 serverproxi 3 settabl 3 seven 3 sh 3 shapetransform 3
shearfactor 3 shebang 3 shortcut 3 shut 3 sibl 3 sigchld 3 sigterm 3 sit 3 six 3 skipkei 3
smtplib 3 smtpnotsupportederror 3 solut 3 somewhat 3 spirit 3 sqrt 3 sre 3 stale 3 startup 3
staticmethod 3 stdev 3 stdlib 3 stereo 3 stick 3 stl 3 storag 3 strategi 3 streamhandl 3
strptime 3 studio 3 subpath 3 subscrib 3 subst 3 subtest 3 suggest 3 superset 3 swig 3 syntact 3
sysconfig 3 systemconfigur 3 t2 3 technic 3 techniqu 3 telnetlib 3 terminateprocess 3 testrunn 3
textfil 3 th 3 themenam 3 thereto 3 till 3 tolin 3 transient 3 transit 3 transmiss 3 treeview 3
trip 3 triplet 3 trivial 3 troughcolor 3 trunc 3 trust 3 unari 3 unblock 3 unbuff 3 uncondition
3 undocu 3 unequ 3 unfold 3 unformat 3 unixccompil 3 unmarshal 3 unpredict 3 unrecogn 3
unrecover 3 unsign 3 uppercas 3 v2 3 van 3 vec 3 versionchang 3 visitor 3 w3c 3 waiter 3 wfile 3
wherea 3 wiki 3 wikipedia 3 worri 3 wors 3 wouldn 3 writeabl 3 writefram 3 writeframesraw 3 x02
3 x8d 3 xaf 3 xbm 3 xea 3 xhtml 3 xover 3 xt 3 xztar 3 zlib 3
"""
