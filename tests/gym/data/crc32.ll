; ModuleID = 'crc32.c'
source_filename = "crc32.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@main.buf = internal global [4096 x i8] zeroinitializer, align 16
@.str = private unnamed_addr constant [10 x i8] c"123456789\00", align 1
@.str.1 = private unnamed_addr constant [44 x i8] c"The quick brown fox jumps over the lazy dog\00", align 1
@.str.2 = private unnamed_addr constant [1 x i8] zeroinitializer, align 1
@.str.3 = private unnamed_addr constant [18 x i8] c"crc32: %08x %08x\0A\00", align 1
@crc_table = internal global [256 x i32] zeroinitializer, align 16

; Function Attrs: minsize nounwind optsize uwtable
define dso_local i32 @main() #0 {
  %1 = alloca i32, align 4
  %2 = alloca ptr, align 8
  %3 = alloca ptr, align 8
  %4 = alloca i32, align 4
  %5 = alloca i32, align 4
  %6 = alloca i32, align 4
  %7 = alloca i32, align 4
  store i32 0, ptr %1, align 4
  call void @llvm.lifetime.start.p0(i64 8, ptr %2) #5
  store ptr @.str, ptr %2, align 8, !tbaa !5
  call void @llvm.lifetime.start.p0(i64 8, ptr %3) #5
  store ptr @.str.1, ptr %3, align 8, !tbaa !5
  call void @crc32_init() #6
  %8 = load ptr, ptr %2, align 8, !tbaa !5
  %9 = load ptr, ptr %2, align 8, !tbaa !5
  %10 = call i64 @strlen(ptr noundef %9) #7
  %11 = call i32 @crc32_of(ptr noundef %8, i64 noundef %10) #6
  call void @check(i32 noundef %11, i32 noundef -873187034) #6
  %12 = load ptr, ptr %3, align 8, !tbaa !5
  %13 = load ptr, ptr %3, align 8, !tbaa !5
  %14 = call i64 @strlen(ptr noundef %13) #7
  %15 = call i32 @crc32_of(ptr noundef %12, i64 noundef %14) #6
  call void @check(i32 noundef %15, i32 noundef 1095738169) #6
  %16 = call i32 @crc32_of(ptr noundef @.str.2, i64 noundef 0) #6
  call void @check(i32 noundef %16, i32 noundef 0) #6
  call void @llvm.lifetime.start.p0(i64 4, ptr %4) #5
  store i32 0, ptr %4, align 4, !tbaa !9
  br label %17

17:                                               ; preds = %33, %0
  %18 = load i32, ptr %4, align 4, !tbaa !9
  %19 = icmp ult i32 %18, 4096
  br i1 %19, label %21, label %20

20:                                               ; preds = %17
  call void @llvm.lifetime.end.p0(i64 4, ptr %4) #5
  br label %36

21:                                               ; preds = %17
  %22 = load i32, ptr %4, align 4, !tbaa !9
  %23 = mul i32 %22, 31
  %24 = add i32 %23, 7
  %25 = load i32, ptr %4, align 4, !tbaa !9
  %26 = lshr i32 %25, 3
  %27 = xor i32 %24, %26
  %28 = and i32 %27, 255
  %29 = trunc i32 %28 to i8
  %30 = load i32, ptr %4, align 4, !tbaa !9
  %31 = zext i32 %30 to i64
  %32 = getelementptr inbounds [4096 x i8], ptr @main.buf, i64 0, i64 %31
  store i8 %29, ptr %32, align 1, !tbaa !11
  br label %33

33:                                               ; preds = %21
  %34 = load i32, ptr %4, align 4, !tbaa !9
  %35 = add i32 %34, 1
  store i32 %35, ptr %4, align 4, !tbaa !9
  br label %17, !llvm.loop !12

36:                                               ; preds = %20
  call void @llvm.lifetime.start.p0(i64 4, ptr %5) #5
  %37 = call i32 @crc32_of(ptr noundef @main.buf, i64 noundef 4096) #6
  store i32 %37, ptr %5, align 4, !tbaa !9
  %38 = load i32, ptr %5, align 4, !tbaa !9
  call void @check(i32 noundef %38, i32 noundef -1425669323) #6
  call void @llvm.lifetime.start.p0(i64 4, ptr %6) #5
  store i32 0, ptr %6, align 4, !tbaa !9
  call void @llvm.lifetime.start.p0(i64 4, ptr %7) #5
  store i32 0, ptr %7, align 4, !tbaa !9
  br label %39

39:                                               ; preds = %49, %36
  %40 = load i32, ptr %7, align 4, !tbaa !9
  %41 = icmp ult i32 %40, 4096
  br i1 %41, label %43, label %42

42:                                               ; preds = %39
  call void @llvm.lifetime.end.p0(i64 4, ptr %7) #5
  br label %52

43:                                               ; preds = %39
  %44 = load i32, ptr %6, align 4, !tbaa !9
  %45 = load i32, ptr %7, align 4, !tbaa !9
  %46 = zext i32 %45 to i64
  %47 = getelementptr inbounds i8, ptr @main.buf, i64 %46
  %48 = call i32 @crc32_update(i32 noundef %44, ptr noundef %47, i64 noundef 512) #6
  store i32 %48, ptr %6, align 4, !tbaa !9
  br label %49

49:                                               ; preds = %43
  %50 = load i32, ptr %7, align 4, !tbaa !9
  %51 = add i32 %50, 512
  store i32 %51, ptr %7, align 4, !tbaa !9
  br label %39, !llvm.loop !14

52:                                               ; preds = %42
  %53 = load i32, ptr %6, align 4, !tbaa !9
  %54 = load i32, ptr %5, align 4, !tbaa !9
  call void @check(i32 noundef %53, i32 noundef %54) #6
  %55 = load ptr, ptr %2, align 8, !tbaa !5
  %56 = call i32 @crc32_of(ptr noundef %55, i64 noundef 9) #6
  %57 = load i32, ptr %5, align 4, !tbaa !9
  %58 = call i32 (ptr, ...) @printf(ptr noundef @.str.3, i32 noundef %56, i32 noundef %57) #6
  call void @llvm.lifetime.end.p0(i64 4, ptr %6) #5
  call void @llvm.lifetime.end.p0(i64 4, ptr %5) #5
  call void @llvm.lifetime.end.p0(i64 8, ptr %3) #5
  call void @llvm.lifetime.end.p0(i64 8, ptr %2) #5
  ret i32 0
}

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.start.p0(i64 immarg, ptr nocapture) #1

; Function Attrs: minsize nounwind optsize uwtable
define internal void @crc32_init() #0 {
  %1 = alloca i32, align 4
  %2 = alloca i32, align 4
  %3 = alloca i32, align 4
  %4 = alloca i32, align 4
  call void @llvm.lifetime.start.p0(i64 4, ptr %1) #5
  store i32 0, ptr %1, align 4, !tbaa !9
  br label %5

5:                                                ; preds = %35, %0
  %6 = load i32, ptr %1, align 4, !tbaa !9
  %7 = icmp ult i32 %6, 256
  br i1 %7, label %9, label %8

8:                                                ; preds = %5
  store i32 2, ptr %2, align 4
  call void @llvm.lifetime.end.p0(i64 4, ptr %1) #5
  br label %38

9:                                                ; preds = %5
  call void @llvm.lifetime.start.p0(i64 4, ptr %3) #5
  %10 = load i32, ptr %1, align 4, !tbaa !9
  store i32 %10, ptr %3, align 4, !tbaa !9
  call void @llvm.lifetime.start.p0(i64 4, ptr %4) #5
  store i32 0, ptr %4, align 4, !tbaa !9
  br label %11

11:                                               ; preds = %27, %9
  %12 = load i32, ptr %4, align 4, !tbaa !9
  %13 = icmp slt i32 %12, 8
  br i1 %13, label %15, label %14

14:                                               ; preds = %11
  store i32 5, ptr %2, align 4
  call void @llvm.lifetime.end.p0(i64 4, ptr %4) #5
  br label %30

15:                                               ; preds = %11
  %16 = load i32, ptr %3, align 4, !tbaa !9
  %17 = and i32 %16, 1
  %18 = icmp ne i32 %17, 0
  br i1 %18, label %19, label %23

19:                                               ; preds = %15
  %20 = load i32, ptr %3, align 4, !tbaa !9
  %21 = lshr i32 %20, 1
  %22 = xor i32 -306674912, %21
  store i32 %22, ptr %3, align 4, !tbaa !9
  br label %26

23:                                               ; preds = %15
  %24 = load i32, ptr %3, align 4, !tbaa !9
  %25 = lshr i32 %24, 1
  store i32 %25, ptr %3, align 4, !tbaa !9
  br label %26

26:                                               ; preds = %23, %19
  br label %27

27:                                               ; preds = %26
  %28 = load i32, ptr %4, align 4, !tbaa !9
  %29 = add nsw i32 %28, 1
  store i32 %29, ptr %4, align 4, !tbaa !9
  br label %11, !llvm.loop !15

30:                                               ; preds = %14
  %31 = load i32, ptr %3, align 4, !tbaa !9
  %32 = load i32, ptr %1, align 4, !tbaa !9
  %33 = zext i32 %32 to i64
  %34 = getelementptr inbounds [256 x i32], ptr @crc_table, i64 0, i64 %33
  store i32 %31, ptr %34, align 4, !tbaa !9
  call void @llvm.lifetime.end.p0(i64 4, ptr %3) #5
  br label %35

35:                                               ; preds = %30
  %36 = load i32, ptr %1, align 4, !tbaa !9
  %37 = add i32 %36, 1
  store i32 %37, ptr %1, align 4, !tbaa !9
  br label %5, !llvm.loop !16

38:                                               ; preds = %8
  ret void
}

; Function Attrs: minsize nounwind optsize uwtable
define internal void @check(i32 noundef %0, i32 noundef %1) #0 {
  %3 = alloca i32, align 4
  %4 = alloca i32, align 4
  store i32 %0, ptr %3, align 4, !tbaa !9
  store i32 %1, ptr %4, align 4, !tbaa !9
  %5 = load i32, ptr %3, align 4, !tbaa !9
  %6 = load i32, ptr %4, align 4, !tbaa !9
  %7 = icmp ne i32 %5, %6
  br i1 %7, label %8, label %9

8:                                                ; preds = %2
  call void @abort() #8
  unreachable

9:                                                ; preds = %2
  ret void
}

; Function Attrs: minsize nounwind optsize uwtable
define internal i32 @crc32_of(ptr noundef %0, i64 noundef %1) #0 {
  %3 = alloca ptr, align 8
  %4 = alloca i64, align 8
  store ptr %0, ptr %3, align 8, !tbaa !5
  store i64 %1, ptr %4, align 8, !tbaa !17
  %5 = load ptr, ptr %3, align 8, !tbaa !5
  %6 = load i64, ptr %4, align 8, !tbaa !17
  %7 = call i32 @crc32_update(i32 noundef 0, ptr noundef %5, i64 noundef %6) #6
  ret i32 %7
}

; Function Attrs: minsize nounwind optsize willreturn memory(read)
declare i64 @strlen(ptr noundef) #2

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.end.p0(i64 immarg, ptr nocapture) #1

; Function Attrs: minsize nounwind optsize uwtable
define internal i32 @crc32_update(i32 noundef %0, ptr noundef %1, i64 noundef %2) #0 {
  %4 = alloca i32, align 4
  %5 = alloca ptr, align 8
  %6 = alloca i64, align 8
  %7 = alloca i64, align 8
  store i32 %0, ptr %4, align 4, !tbaa !9
  store ptr %1, ptr %5, align 8, !tbaa !5
  store i64 %2, ptr %6, align 8, !tbaa !17
  %8 = load i32, ptr %4, align 4, !tbaa !9
  %9 = xor i32 %8, -1
  store i32 %9, ptr %4, align 4, !tbaa !9
  call void @llvm.lifetime.start.p0(i64 8, ptr %7) #5
  store i64 0, ptr %7, align 8, !tbaa !17
  br label %10

10:                                               ; preds = %30, %3
  %11 = load i64, ptr %7, align 8, !tbaa !17
  %12 = load i64, ptr %6, align 8, !tbaa !17
  %13 = icmp ult i64 %11, %12
  br i1 %13, label %15, label %14

14:                                               ; preds = %10
  call void @llvm.lifetime.end.p0(i64 8, ptr %7) #5
  br label %33

15:                                               ; preds = %10
  %16 = load i32, ptr %4, align 4, !tbaa !9
  %17 = load ptr, ptr %5, align 8, !tbaa !5
  %18 = load i64, ptr %7, align 8, !tbaa !17
  %19 = getelementptr inbounds i8, ptr %17, i64 %18
  %20 = load i8, ptr %19, align 1, !tbaa !11
  %21 = zext i8 %20 to i32
  %22 = xor i32 %16, %21
  %23 = and i32 %22, 255
  %24 = zext i32 %23 to i64
  %25 = getelementptr inbounds [256 x i32], ptr @crc_table, i64 0, i64 %24
  %26 = load i32, ptr %25, align 4, !tbaa !9
  %27 = load i32, ptr %4, align 4, !tbaa !9
  %28 = lshr i32 %27, 8
  %29 = xor i32 %26, %28
  store i32 %29, ptr %4, align 4, !tbaa !9
  br label %30

30:                                               ; preds = %15
  %31 = load i64, ptr %7, align 8, !tbaa !17
  %32 = add i64 %31, 1
  store i64 %32, ptr %7, align 8, !tbaa !17
  br label %10, !llvm.loop !19

33:                                               ; preds = %14
  %34 = load i32, ptr %4, align 4, !tbaa !9
  %35 = xor i32 %34, -1
  ret i32 %35
}

; Function Attrs: minsize optsize
declare i32 @printf(ptr noundef, ...) #3

; Function Attrs: minsize noreturn nounwind optsize
declare void @abort() #4

attributes #0 = { minsize nounwind optsize uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { nocallback nofree nosync nounwind willreturn memory(argmem: readwrite) }
attributes #2 = { minsize nounwind optsize willreturn memory(read) "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #3 = { minsize optsize "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #4 = { minsize noreturn nounwind optsize "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #5 = { nounwind }
attributes #6 = { minsize optsize }
attributes #7 = { minsize nounwind optsize willreturn memory(read) }
attributes #8 = { minsize noreturn nounwind optsize }

!llvm.module.flags = !{!0, !1, !2, !3}
!llvm.ident = !{!4}

!0 = !{i32 1, !"wchar_size", i32 4}
!1 = !{i32 8, !"PIC Level", i32 2}
!2 = !{i32 7, !"PIE Level", i32 2}
!3 = !{i32 7, !"uwtable", i32 2}
!4 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!5 = !{!6, !6, i64 0}
!6 = !{!"any pointer", !7, i64 0}
!7 = !{!"omnipotent char", !8, i64 0}
!8 = !{!"Simple C/C++ TBAA"}
!9 = !{!10, !10, i64 0}
!10 = !{!"int", !7, i64 0}
!11 = !{!7, !7, i64 0}
!12 = distinct !{!12, !13}
!13 = !{!"llvm.loop.mustprogress"}
!14 = distinct !{!14, !13}
!15 = distinct !{!15, !13}
!16 = distinct !{!16, !13}
!17 = !{!18, !18, i64 0}
!18 = !{!"long", !7, i64 0}
!19 = distinct !{!19, !13}
